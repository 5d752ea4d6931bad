//! The link through an HTTP proxy the environment names (a CONNECT tunnel), straight to the
//! instance where NO_PROXY says so, and a proxy that is not there named in the log.

use super::*;

/// Debian's tinyproxy on a loopback port, logging each request it carries.
struct Tinyproxy {
    child: std::process::Child,
    url: String,
    log: std::path::PathBuf,
}

impl Tinyproxy {
    fn start(dir: &std::path::Path) -> Tinyproxy {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let config = dir.join("tinyproxy.conf");
        // No ConnectPort line: CONNECT to any port (the peer's is not 443).
        std::fs::write(
            &config,
            format!("Port {port}\nListen 127.0.0.1\nTimeout 60\nLogLevel Connect\nMaxClients 20\nAllow 127.0.0.1\n"),
        )
        .unwrap();
        let log = dir.join("tinyproxy.log");
        let out = std::fs::File::create(&log).unwrap();
        let child = std::process::Command::new("tinyproxy")
            .args(["-d", "-c"])
            .arg(&config)
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .expect("tinyproxy (Debian's package) runs");
        let url = format!("http://127.0.0.1:{port}");
        assert!(
            eventually(WAIT, || std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()),
            "tinyproxy listens"
        );
        Tinyproxy { child, url, log }
    }

    fn carried(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Tinyproxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The environment naming `proxy` for http and https, and `no_proxy` as what goes direct.
fn proxy_env<'a>(proxy: &'a str, no_proxy: &'a str) -> [(&'static str, &'a str); 3] {
    [
        ("HTTP_PROXY", proxy),
        ("HTTPS_PROXY", proxy),
        ("NO_PROXY", no_proxy),
    ]
}

#[tokio::test(flavor = "multi_thread")]
async fn the_link_goes_through_the_proxy_the_environment_names() {
    let peer = peer().await;
    let home = Home::new();
    let proxy = Tinyproxy::start(&home.path());
    let instance = peer.url().trim_start_matches("http://").to_string();
    home.config_for(&peer.url(), "");
    let service = home.service_with_env(&proxy_env(&proxy.url, ""));
    let mut link = peer.next_link(WAIT).await.unwrap();
    link.hello(WAIT).await.unwrap();
    link.initialize(WAIT).await.unwrap();
    let carried = proxy.carried();
    // The link is a CONNECT tunnel (the proxy sees no header of it); the discovery a proxied GET.
    assert!(
        carried.contains(&format!("CONNECT {instance} HTTP/1.1")),
        "{carried}"
    );
    assert!(carried.contains(&format!("GET http://{instance}/")), "{carried}");
    assert!(
        !carried.contains(TOKEN),
        "the token never reaches the proxy's log"
    );
    drop(service);
    drop(link);

    // NO_PROXY naming the instance: straight to it, the proxy carries nothing more.
    let before = proxy.carried().len();
    let home = Home::new();
    home.config_for(&peer.url(), "");
    let _service = home.service_with_env(&proxy_env(&proxy.url, "127.0.0.1"));
    let mut link = peer.next_link(WAIT).await.unwrap();
    link.hello(WAIT).await.unwrap();
    assert_eq!(proxy.carried().len(), before, "{}", proxy.carried());

    // A proxy that is not there: the device says so by name, and retries.
    let home = Home::new();
    home.config_for(&peer.url(), "");
    let service = home.service_with_env(&proxy_env("http://127.0.0.1:1", ""));
    assert!(
        eventually(WAIT, || service
            .log()
            .contains("through the proxy http://127.0.0.1:1")),
        "{}",
        service.log()
    );
}
