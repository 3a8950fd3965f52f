//! The link's checks against a real python-socketio server serving TLS (uvicorn) with
//! certificates this test makes with the `openssl` command: a test CA and a server certificate it
//! signs, another CA, and a self-signed certificate for the pin.

mod support;

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use oh_transport::{parse_sha256_fingerprint, CertificateCheck, ErrorCode, Transport, TransportConfig, TransportError};
use support::*;

const T: Duration = Duration::from_secs(10);

/// The files of one test's certificates.
struct Pki {
    dir: tempfile::TempDir,
}

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl").current_dir(dir).args(args).output().expect("the openssl command");
    assert!(out.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

impl Pki {
    /// `ca.pem` (a test CA), `server.pem`/`server.key` signed by it for 127.0.0.1 and localhost,
    /// `other-ca.pem` (a CA that signed nothing here), `self.pem`/`self.key` (self-signed).
    fn new() -> Pki {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];
        let ec = [&key[..], &["-days", "2"]].concat();
        for (name, cn) in [("ca", "oh-test-ca"), ("other-ca", "oh-other-ca")] {
            let (pem, key, subj) = (format!("{name}.pem"), format!("{name}.key"), format!("/CN={cn}"));
            let mut args = vec!["req", "-x509", "-keyout", &key, "-out", &pem, "-subj", &subj];
            args.extend(&ec);
            args.extend(["-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign"]);
            openssl(d, &args);
        }
        let mut csr = vec!["req", "-new", "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost"];
        csr.extend(key);
        openssl(d, &csr);
        std::fs::write(d.join("ext.cnf"), "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n")
            .unwrap();
        openssl(
            d,
            &[
                "x509",
                "-req",
                "-in",
                "server.csr",
                "-CA",
                "ca.pem",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-out",
                "server.pem",
                "-days",
                "2",
                "-extfile",
                "ext.cnf",
            ],
        );
        let mut selfsigned = vec!["req", "-x509", "-keyout", "self.key", "-out", "self.pem", "-subj", "/CN=pinned"];
        selfsigned.extend(&ec);
        selfsigned.extend(["-addext", "subjectAltName=IP:127.0.0.1"]);
        openssl(d, &selfsigned);
        Pki { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The SHA-256 fingerprint of a PEM certificate, as `openssl x509 -fingerprint` prints it.
    fn fingerprint(&self, name: &str) -> [u8; 32] {
        let out = Command::new("openssl")
            .args(["x509", "-noout", "-fingerprint", "-sha256", "-in"])
            .arg(self.path(name))
            .output()
            .unwrap();
        parse_sha256_fingerprint(&String::from_utf8_lossy(&out.stdout)).unwrap()
    }

    fn server(&self, cert: &str, key: &str) -> Option<PyServer> {
        let (cert, key) = (self.path(cert), self.path(key));
        PyServer::start(&["--tls-cert", cert.to_str().unwrap(), "--tls-key", key.to_str().unwrap()])
    }
}

fn config(url: String, check: CertificateCheck) -> TransportConfig {
    let mut c = TransportConfig::new(url, "conv1", "/tmp/ws");
    c.session_api_key = Some("test-key".into());
    c.backoff_min = Duration::from_millis(100);
    c.initial_connect_timeout = Duration::from_secs(5);
    c.certificate_check = check;
    c
}

/// The refused executor never reached the server's registration (nothing was sent before the refusal).
async fn assert_never_registered(mut server: PyServer) {
    let seen =
        tokio::task::spawn_blocking(move || server.try_expect("registered", Duration::from_millis(300), |_| true))
            .await
            .unwrap();
    assert!(seen.is_none(), "{seen:?}");
}

/// Registers over wss and runs one action through it.
async fn serves_over_tls(mut server: PyServer, check: CertificateCheck) {
    let h = MockHandler::new();
    let t = Transport::connect(config(server.url(), check), h.clone(), None).await.expect("registers over wss");
    let (_server, reply) = tokio::task::spawn_blocking(move || {
        server.expect("registered", T, |_| true);
        server.send(run_action(1, "echo over tls"));
        let r = server.reply(1, T);
        (server, r)
    })
    .await
    .unwrap();
    assert_eq!(reply["content"], "echo over tls");
    assert_eq!(h.count(1), 1);
    t.shutdown().await;
}

/// The connect fails with a certificate refusal, and the server never saw a registration.
async fn refused(server: PyServer, check: CertificateCheck, words: &str) {
    let h = MockHandler::new();
    let started = Instant::now();
    let err = match Transport::connect(config(server.url(), check), h, None).await {
        Ok(_) => panic!("connected to a server it must refuse"),
        Err(e) => e,
    };
    assert!(matches!(&err, TransportError::Certificate(m) if m.contains(words)), "{err:?}");
    assert_eq!(err.code(), ErrorCode::Auth);
    // Refused at once, not retried until the initial timeout.
    assert!(started.elapsed() < Duration::from_secs(4), "{:?}", started.elapsed());
    assert_never_registered(server).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accepted_with_the_ca_file_that_signed_the_server_certificate() {
    init_tracing();
    let pki = Pki::new();
    let Some(server) = pki.server("server.pem", "server.key") else { return };
    serves_over_tls(server, CertificateCheck::CaFile(pki.path("ca.pem"))).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_without_the_ca_file_and_with_another_ca() {
    init_tracing();
    let pki = Pki::new();
    let Some(server) = pki.server("server.pem", "server.key") else { return };
    refused(server, CertificateCheck::SystemRoots, "its TLS certificate was not accepted").await;
    let Some(server) = pki.server("server.pem", "server.key") else { return };
    refused(server, CertificateCheck::CaFile(pki.path("other-ca.pem")), "not signed by the CA file's CA").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pinned_self_signed_certificate_is_accepted_and_another_is_refused() {
    init_tracing();
    let pki = Pki::new();
    let Some(server) = pki.server("self.pem", "self.key") else { return };
    serves_over_tls(server, CertificateCheck::Sha256Pin(pki.fingerprint("self.pem"))).await;
    // The right server, a wrong pin (here: the CA-signed certificate's).
    let Some(server) = pki.server("self.pem", "self.key") else { return };
    refused(server, CertificateCheck::Sha256Pin(pki.fingerprint("server.pem")), "not the pinned").await;
}

/// A child process killed when the test ends, however it ends.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The pin is compared on a TLS connection of its own; the real connection must then be held to the
/// certificate that check saw. A front that shows the pinned certificate first and another one
/// after (`support/alternating_tls.py`) must be refused, not registered with.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pinned_link_holds_the_real_connection_to_the_certificate_the_check_saw() {
    init_tracing();
    let pki = Pki::new();
    let Some(server) = PyServer::start(&[]) else { return };
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/support/alternating_tls.py");
    let (first, then) = (pki.path("self.pem"), pki.path("other-ca.pem"));
    let (first_key, then_key) = (pki.path("self.key"), pki.path("other-ca.key"));
    let mut front = KillOnDrop(
        Command::new(python().unwrap())
            .arg(script)
            .args(["--target", &server.port.to_string(), "--first"])
            .args([&first, &first_key])
            .arg("--then")
            .args([&then, &then_key])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut lines = std::io::BufReader::new(front.0.stdout.take().unwrap()).lines();
    let listening: serde_json::Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    let url = format!("https://127.0.0.1:{}", listening["port"]);
    let err = match Transport::connect(
        config(url, CertificateCheck::Sha256Pin(pki.fingerprint("self.pem"))),
        MockHandler::new(),
        None,
    )
    .await
    {
        Ok(_) => panic!("registered through a certificate that was not the pinned one"),
        Err(e) => e,
    };
    assert!(
        matches!(&err, TransportError::Certificate(m) if m.contains("another certificate than the pinned one")),
        "{err:?}"
    );
    drop(front);
    let accepted: Vec<String> = lines.map_while(Result::ok).collect();
    assert!(accepted.len() >= 2 && accepted[1].contains("\"then\""), "the check and the real connection: {accepted:?}");
    assert_never_registered(server).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_http_to_an_address_that_is_not_loopback_is_refused_at_once() {
    init_tracing();
    let started = Instant::now();
    // TEST-NET-1 (RFC 5737): nothing answers there; without the check this is a 5 s timeout.
    let cfg = config("http://192.0.2.1:3000".into(), CertificateCheck::SystemRoots);
    let err = match Transport::connect(cfg, MockHandler::new(), None).await {
        Ok(_) => panic!("connected"),
        Err(e) => e,
    };
    assert!(matches!(&err, TransportError::InsecureUrl(m) if m.contains("refusing plain http")), "{err:?}");
    assert_eq!(err.code(), ErrorCode::Refused);
    assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
}
