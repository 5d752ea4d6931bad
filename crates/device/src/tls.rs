//! The process's one TLS client configuration: the platform's verifier over the system's trusted
//! roots, built once and shared by every HTTPS client (discovery and login, the model and memory
//! requests) and by the link's WebSocket.
//!
//! Each reqwest client read and parsed every certificate of the system's store when it was built,
//! and tokio-tungstenite did at every dial: two copies of the roots held at start-up, a third and
//! the reading again at each redial. Roots added to the system while the device runs are read at
//! its next start.

use std::sync::{Arc, OnceLock};

/// The shared configuration; `None` where it cannot be built (no root certificates on this system),
/// said once in the log: each client then builds its own, and fails as it would have.
pub fn client_config() -> Option<Arc<rustls::ClientConfig>> {
    static CONFIG: OnceLock<Option<Arc<rustls::ClientConfig>>> = OnceLock::new();
    CONFIG
        .get_or_init(|| match build() {
            Ok(config) => Some(Arc::new(config)),
            Err(e) => {
                tracing::warn!("the system's TLS roots could not be read once for all connections: {e}");
                None
            }
        })
        .clone()
}

fn build() -> Result<rustls::ClientConfig, rustls::Error> {
    use rustls_platform_verifier::BuilderVerifierExt;
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_platform_verifier()?
        .with_no_client_auth())
}

/// A reqwest client builder on the shared configuration.
pub fn http_client_builder() -> reqwest::ClientBuilder {
    let builder = reqwest::Client::builder();
    match client_config() {
        Some(config) => builder.tls_backend_preconfigured(config.as_ref().clone()),
        None => builder,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_client_shares_one_configuration() {
        let (Some(first), Some(second)) = (client_config(), client_config()) else {
            panic!("this machine has root certificates: the configuration builds");
        };
        assert!(Arc::ptr_eq(&first, &second));
        // HTTP/1.1 on both sides: reqwest is built without HTTP/2, the link is a WebSocket.
        assert!(first.alpn_protocols.is_empty());
        assert!(http_client_builder().build().is_ok());
    }
}
