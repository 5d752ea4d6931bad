//! Logging in with a token another program already holds (`lembas login --token-stdin`, and the
//! desktop app after its one approval), and logging out.
//!
//! The token is proved before anything is written, in the spec's order ("The HTTP API the CLI
//! uses", `/api/v1/instance`): discovery must list protocol 3; `/api/v1/instance` must accept the
//! token (401: not accepted), exist and say a `scope` (404 or no scope: an older server), and that
//! scope must hold `link`. The model list is read as part of the proof. Only then is the token
//! stored (keychain, or the opted-in file) and the login written to `config.yaml` through the one
//! write path: `server: { url, connection }`, and `embedding:` when none is set.

use serde::Serialize;
use serde::de::DeserializeOwned;
use url::Url;

use crate::discovery::{self, DiscoveryError};
use crate::instance_answers::{InstanceAnswer, ModelList};
use crate::keychain::{KeychainError, Token};
use crate::settings::edit::{self, Change};
use crate::settings::{self, Settings, SettingsError};
use crate::setup::Setup;

pub use crate::keychain::TokenStorage;

/// The scope a token needs to link a device.
const LINK_SCOPE: &str = "link";

/// What a login did: the device login's done line (`--json`), plus what a person is told.
///
/// - `fresh`: true unless this login replaced an earlier login to the same server (the config
///   already named that server); re-logging in there replaces the token and says `false`.
/// - `connection`: the instance's name for itself (`connection` in `/api/v1/instance`), if it says.
/// - `base_url`: the server's URL as stored in the config (`server.url`), without a trailing `/`.
/// - `version`: the instance's version (`/api/v1/instance`, else discovery's).
/// - `models`: the served ids of the chat models (`kind: "chat"` or no kind), in the server's order.
/// - `changes`: the config keys this login changed, of `"server"` and `"embedding"`; empty when
///   the config already said all of it (a new token for the same login).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename = "done")]
pub struct LoginDone {
    pub fresh: bool,
    pub connection: Option<String>,
    pub base_url: String,
    pub version: String,
    pub models: Vec<String>,
    pub changes: Vec<String>,
    /// The instance's display name.
    #[serde(skip)]
    pub name: Option<String>,
    /// Who the token belongs to (`account.name`, `account.email`).
    #[serde(skip)]
    pub account: Option<String>,
    /// `<connection>/<id>` when this login set `embedding:`.
    #[serde(skip)]
    pub embedding_set: Option<String>,
    #[serde(skip)]
    pub storage: TokenStorage,
}

/// Why a login stopped. Nothing was written unless the variant says otherwise.
#[derive(Debug, thiserror::Error)]
pub enum LoginError {
    #[error(
        "The token has spaces or line breaks inside it; give only the token on standard input, on one line."
    )]
    MalformedToken,
    #[error("{0}")]
    BadServer(String),
    /// Discovery does not list protocol 3: the spec's sentence, word for word.
    #[error("{0}")]
    ServerNeedsUpdate(String),
    #[error("Cannot reach {server} ({why}). Check the address and your network, then log in again.")]
    Unreachable { server: String, why: String },
    #[error(
        "{server} does not accept this token (401): it is mistyped, expired or revoked. Get a new device token from {server} and log in again."
    )]
    TokenRefused { server: String },
    #[error(
        "{server} is older than LLeMbas 2.0 ({why}), so this device cannot log in to it. Update the server, or use LLeMbas CLI 1.x with it."
    )]
    OlderServer { server: String, why: String },
    #[error(
        "This token cannot link a device: {server} granted it only \"{scope}\", without link. Get a token that may link this computer (log in from LLeMbas Desktop, or allow linking when you approve the device) and log in again."
    )]
    NoLinkScope { server: String, scope: String },
    #[error(
        "{server} answered {what} with {answer}, so the token could not be proved. Try again later; nothing was changed."
    )]
    BadAnswer {
        server: String,
        what: &'static str,
        answer: String,
    },
    /// The config cannot be read; checked before the token is stored.
    #[error("{0}")]
    Config(SettingsError),
    /// The token could not be stored; nothing was written.
    #[error("{0}")]
    Keychain(KeychainError),
    /// The token is stored, but the config could not be written.
    #[error("The token is stored, but the login could not be saved in the config: {0}")]
    Save(SettingsError),
    #[error("The login stopped unexpectedly ({0}); nothing was changed. Try again.")]
    Internal(String),
}

/// What a logout removed.
#[derive(Debug, Clone, PartialEq)]
pub struct LogoutDone {
    /// The server the config named, if it named one.
    pub server: Option<String>,
}

/// Why a logout did not remove everything; each part says what is left.
#[derive(Debug, thiserror::Error)]
#[error("{}", self.sentence())]
pub struct LogoutError {
    /// The config still names the server.
    pub config: Option<SettingsError>,
    /// The token may still be stored.
    pub token: Option<KeychainError>,
}

impl LogoutError {
    fn sentence(&self) -> String {
        let mut parts = Vec::new();
        if let Some(e) = &self.config {
            parts.push(format!("The login could not be removed from the config: {e}"));
        }
        if let Some(e) = &self.token {
            parts.push(format!(
                "The token could not be removed, so it may still be stored: {e}. Run lembas logout again once that is fixed."
            ));
        }
        parts.join(" ")
    }
}

/// What `/api/v1/instance` said, checked.
#[derive(Debug, Clone, PartialEq)]
struct Instance {
    connection: Option<String>,
    version: Option<String>,
    name: Option<String>,
    account: Option<String>,
}

/// What `/v1/models` lists for the device.
#[derive(Debug, Clone, PartialEq, Default)]
struct Models {
    chat: Vec<String>,
    first_embedding: Option<String>,
}

/// Proves `token` on `server` and stores the login. See the module's documentation for the order.
pub async fn login(
    setup: &Setup,
    server: &str,
    token: Token,
    storage: TokenStorage,
) -> Result<LoginDone, LoginError> {
    if token
        .expose()
        .chars()
        .any(|c| c.is_whitespace() || c.is_control())
    {
        return Err(LoginError::MalformedToken);
    }
    let url = discovery::server_url(server).map_err(from_discovery)?;
    let base_url = url.as_str().trim_end_matches('/').to_string();
    let client = discovery::http_client();

    let found = discovery::discover(&client, &url, setup.decisions.protocol)
        .await
        .map_err(from_discovery)?;
    let instance = read_instance(&client, &url, &base_url, &token).await?;
    let models = read_models(&client, &url, &base_url, &token).await?;

    // A config that cannot be read cannot be written either: say so before storing the token.
    let dirs = setup.dirs.clone();
    let before = blocking(move || settings::load(&dirs))
        .await?
        .map_err(LoginError::Config)?;

    let (stored, keychain) = (token.clone(), setup.keychain.clone());
    blocking(move || keychain.store_in(&stored, storage))
        .await?
        .map_err(LoginError::Keychain)?;

    let mut changes = vec![Change::SetServer {
        url: base_url.clone(),
        connection: instance.connection.clone(),
    }];
    let embedding = models
        .first_embedding
        .as_ref()
        .map(|id| match &instance.connection {
            Some(connection) => format!("{connection}/{id}"),
            None => id.clone(),
        });
    if let Some(model) = &embedding {
        changes.push(Change::SetEmbeddingIfUnset(model.clone()));
    }
    let dirs = setup.dirs.clone();
    let after = blocking(move || edit::apply(&dirs, &changes))
        .await?
        .map_err(LoginError::Save)?;

    Ok(LoginDone {
        fresh: !same_server(&before, &base_url),
        connection: instance.connection,
        base_url,
        version: instance.version.unwrap_or(found.version),
        models: models.chat,
        changes: changed_keys(&before, &after),
        name: instance.name,
        account: instance.account,
        embedding_set: embedding.filter(|_| before.embedding != after.embedding),
        storage,
    })
}

/// Proves `token` on `server` as a login does (discovery lists protocol 3, `/api/v1/instance`
/// accepts the token), storing nothing: `lembas doctor`. The server's version is the answer.
pub async fn prove(server: &str, token: &Token, protocol: u32) -> Result<String, LoginError> {
    let url = discovery::server_url(server).map_err(from_discovery)?;
    let base_url = url.as_str().trim_end_matches('/').to_string();
    let client = discovery::http_client();
    let found = discovery::discover(&client, &url, protocol)
        .await
        .map_err(from_discovery)?;
    let instance = read_instance(&client, &url, &base_url, token).await?;
    Ok(instance.version.unwrap_or(found.version))
}

/// Removes the login from the config and the token from wherever it is kept. Both are tried
/// whatever happens to the other.
pub async fn logout(setup: &Setup) -> Result<LogoutDone, LogoutError> {
    let dirs = setup.dirs.clone();
    let before = blocking(move || settings::load(&dirs)).await;
    let server = match &before {
        Ok(Ok(s)) => s.server.as_ref().map(|s| s.url.clone()),
        _ => None,
    };
    let dirs = setup.dirs.clone();
    let config = match blocking(move || edit::apply(&dirs, &[Change::ClearServer])).await {
        Ok(Ok(_)) => None,
        Ok(Err(e)) => Some(e),
        Err(e) => Some(SettingsError::Refused(e.to_string())),
    };
    let keychain = setup.keychain.clone();
    let token = match blocking(move || keychain.delete()).await {
        Ok(Ok(())) => None,
        Ok(Err(e)) => Some(e),
        Err(e) => Some(KeychainError::Unavailable(e.to_string())),
    };
    if config.is_none() && token.is_none() {
        Ok(LogoutDone { server })
    } else {
        Err(LogoutError { config, token })
    }
}

/// Runs blocking work (keychain, files) off the async threads.
async fn blocking<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> Result<T, LoginError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| LoginError::Internal(e.to_string()))
}

fn from_discovery(e: DiscoveryError) -> LoginError {
    match e {
        DiscoveryError::OldServer { .. } => LoginError::ServerNeedsUpdate(e.to_string()),
        DiscoveryError::Unreachable { server, why } => LoginError::Unreachable { server, why },
        DiscoveryError::BadUrl(sentence) => LoginError::BadServer(sentence),
        DiscoveryError::NotLembas { .. } => LoginError::BadServer(e.to_string()),
    }
}

/// GETs `path` with the token; the body of a 2xx answer, read.
async fn get_json<T: DeserializeOwned>(
    client: &reqwest::Client,
    url: &Url,
    base_url: &str,
    token: &Token,
    what: &'static str,
) -> Result<(reqwest::StatusCode, Option<T>), LoginError> {
    let response = client
        .get(discovery::endpoint(url, what))
        .bearer_auth(token.expose())
        .send()
        .await
        .map_err(|e| LoginError::Unreachable {
            server: base_url.to_string(),
            why: discovery::cause(&e),
        })?;
    let status = response.status();
    if !status.is_success() {
        return Ok((status, None));
    }
    let body = response.json::<T>().await.map_err(|e| LoginError::BadAnswer {
        server: base_url.to_string(),
        what,
        answer: format!("something that is not its JSON ({})", e.without_url()),
    })?;
    Ok((status, Some(body)))
}

async fn read_instance(
    client: &reqwest::Client,
    url: &Url,
    base_url: &str,
    token: &Token,
) -> Result<Instance, LoginError> {
    const WHAT: &str = "/api/v1/instance";
    match get_json(client, url, base_url, token, WHAT).await? {
        (_, Some(body)) => check_instance(base_url, &body),
        (reqwest::StatusCode::UNAUTHORIZED, None) => Err(LoginError::TokenRefused {
            server: base_url.to_string(),
        }),
        (reqwest::StatusCode::NOT_FOUND, None) => Err(LoginError::OlderServer {
            server: base_url.to_string(),
            why: format!("it has no {WHAT}"),
        }),
        (status, None) => Err(LoginError::BadAnswer {
            server: base_url.to_string(),
            what: WHAT,
            answer: status.to_string(),
        }),
    }
}

async fn read_models(
    client: &reqwest::Client,
    url: &Url,
    base_url: &str,
    token: &Token,
) -> Result<Models, LoginError> {
    const WHAT: &str = "/v1/models";
    match get_json(client, url, base_url, token, WHAT).await? {
        (_, Some(body)) => models_of(base_url, &body),
        (reqwest::StatusCode::UNAUTHORIZED, None) => Err(LoginError::TokenRefused {
            server: base_url.to_string(),
        }),
        (status, None) => Err(LoginError::BadAnswer {
            server: base_url.to_string(),
            what: WHAT,
            answer: status.to_string(),
        }),
    }
}

/// The pure half of the instance check: a scope, and `link` in it.
fn check_instance(server: &str, body: &InstanceAnswer) -> Result<Instance, LoginError> {
    let text = |v: &Option<String>| v.clone().filter(|s| !s.is_empty());
    let Some(scope) = &body.scope else {
        return Err(LoginError::OlderServer {
            server: server.to_string(),
            why: "its /api/v1/instance says no scope".to_string(),
        });
    };
    if !scope.split_whitespace().any(|s| s == LINK_SCOPE) {
        return Err(LoginError::NoLinkScope {
            server: server.to_string(),
            scope: scope.trim().to_string(),
        });
    }
    let account = body
        .account
        .as_ref()
        .and_then(|a| match (text(&a.name), text(&a.email)) {
            (Some(name), Some(email)) => Some(format!("{name} <{email}>")),
            (one, other) => one.or(other),
        });
    Ok(Instance {
        connection: text(&body.connection),
        version: text(&body.version),
        name: text(&body.name),
        account,
    })
}

/// The chat models (`kind: "chat"` or none) and the first embedding model of an OpenAI list.
fn models_of(server: &str, body: &ModelList) -> Result<Models, LoginError> {
    let Some(data) = &body.data else {
        return Err(LoginError::BadAnswer {
            server: server.to_string(),
            what: "/v1/models",
            answer: "something that is not a model list (no data)".to_string(),
        });
    };
    let mut models = Models::default();
    for entry in data {
        let Some(id) = entry.id() else {
            continue;
        };
        match entry.kind.as_deref() {
            _ if entry.is_chat() => models.chat.push(id.to_string()),
            Some("embedding") if models.first_embedding.is_none() => {
                models.first_embedding = Some(id.to_string());
            }
            _ => {}
        }
    }
    Ok(models)
}

fn same_server(settings: &Settings, base_url: &str) -> bool {
    settings
        .server
        .as_ref()
        .is_some_and(|s| s.url.trim_end_matches('/') == base_url)
}

fn changed_keys(before: &Settings, after: &Settings) -> Vec<String> {
    let mut keys = Vec::new();
    if before.server != after.server {
        keys.push("server".to_string());
    }
    if before.embedding != after.embedding {
        keys.push("embedding".to_string());
    }
    keys
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::Server;
    use serde_json::json;

    #[test]
    fn the_instance_must_say_a_scope_with_link() {
        let cases = [
            (
                json!({ "scope": "models memory link", "connection": "c" }),
                Ok(()),
            ),
            (json!({ "scope": "link" }), Ok(())),
            (json!({ "scope": " models\tlink " }), Ok(())),
            (json!({ "scope": "models memory" }), Err("cannot link a device")),
            (json!({ "scope": "models linked" }), Err("cannot link a device")),
            (json!({ "scope": "" }), Err("cannot link a device")),
            (json!({ "version": "1.9.0" }), Err("says no scope")),
            (json!({ "scope": ["link"] }), Err("says no scope")),
        ];
        for (body, want) in cases {
            let got = check_instance(
                "https://l.example",
                &serde_json::from_value(body.clone()).unwrap(),
            );
            match (got, want) {
                (Ok(_), Ok(())) => {}
                (Err(e), Err(part)) => assert!(e.to_string().contains(part), "{body}: {e}"),
                (got, want) => panic!("{body}: got {got:?}, want {want:?}"),
            }
        }
    }

    #[test]
    fn the_instance_answer_is_read() {
        let body = json!({
            "version": "2.0.1", "name": "Home", "connection": "home", "scope": "models link",
            "account": { "email": "p@example.com", "name": "P" },
        });
        let instance = check_instance("https://l.example", &serde_json::from_value(body).unwrap()).unwrap();
        assert_eq!(
            instance,
            Instance {
                connection: Some("home".into()),
                version: Some("2.0.1".into()),
                name: Some("Home".into()),
                account: Some("P <p@example.com>".into()),
            }
        );
    }

    #[test]
    fn chat_models_and_the_first_embedding() {
        let body = json!({ "object": "list", "data": [
            { "id": "a/chat" },
            { "id": "a/tts", "kind": "tts" },
            { "id": "a/embed-1", "kind": "embedding" },
            { "id": "a/deep", "kind": "chat" },
            { "id": "a/embed-2", "kind": "embedding" },
            { "id": "a/img", "kind": "image" },
            { "kind": "chat" },
        ]});
        let list = |v| serde_json::from_value::<ModelList>(v).unwrap();
        let models = models_of("s", &list(body)).unwrap();
        assert_eq!(models.chat, ["a/chat", "a/deep"]);
        assert_eq!(models.first_embedding.as_deref(), Some("a/embed-1"));
        assert!(models_of("s", &list(json!({ "models": [] }))).is_err());
        assert_eq!(
            models_of("s", &list(json!({ "data": [] }))).unwrap(),
            Models::default()
        );
    }

    #[test]
    fn the_done_line_has_the_spec_fields_only() {
        let done = LoginDone {
            fresh: true,
            connection: Some("example".into()),
            base_url: "https://l.example".into(),
            version: "2.0.0".into(),
            models: vec!["example/chat".into()],
            changes: vec!["server".into(), "embedding".into()],
            name: Some("Name".into()),
            account: Some("someone".into()),
            embedding_set: Some("example/example/embed".into()),
            storage: TokenStorage::Keychain,
        };
        assert_eq!(
            serde_json::to_value(&done).unwrap(),
            json!({
                "event": "done", "fresh": true, "connection": "example", "base_url": "https://l.example",
                "version": "2.0.0", "models": ["example/chat"], "changes": ["server", "embedding"],
            })
        );
    }

    #[test]
    fn fresh_and_changes_compare_the_config() {
        let logged_in = Settings {
            server: Some(Server {
                url: "https://l.example/".into(),
                connection: Some("c".into()),
            }),
            ..Settings::default()
        };
        assert!(same_server(&logged_in, "https://l.example"));
        assert!(!same_server(&logged_in, "https://other.example"));
        assert!(!same_server(&Settings::default(), "https://l.example"));
        let with_embedding = Settings {
            embedding: Some("c/e".into()),
            ..logged_in.clone()
        };
        assert_eq!(changed_keys(&logged_in, &logged_in), Vec::<String>::new());
        assert_eq!(
            changed_keys(&Settings::default(), &with_embedding),
            ["server", "embedding"]
        );
        assert_eq!(changed_keys(&logged_in, &with_embedding), ["embedding"]);
    }
}
