//! The link to the server, checked before each connection: plain `http`/`ws` only to this
//! machine (every address the host resolves to is loopback), and for `https`/`wss` the server's
//! certificate checked by the system's trust store, by a CA file the user names (only that CA),
//! or by a SHA-256 fingerprint pin.
//!
//! Why a pin is checked this way: rust_socketio opens the TLS stream itself (tokio-tungstenite
//! with a native-tls connector) and never hands out the peer's certificate, and native-tls has no
//! verification callback. So a pinned link first opens a TLS connection of its own that accepts
//! any certificate, reads the leaf and compares its SHA-256 with the pin; on a match the leaf
//! becomes the only trust anchor of the connector rust_socketio is given, so the real connection
//! is verified by the TLS library against exactly that certificate (no window between the check
//! and the use: another certificate fails the real handshake). The host name is not checked under
//! a pin (the pin names the certificate). OpenSSL takes a certificate as an anchor only when it is
//! self-signed, so a pin works for a self-signed server certificate; a CA-issued one is checked
//! with `--ca-file` or the system store instead (the error says so).

use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use native_tls::{Certificate, TlsConnector};

use crate::TransportError;

/// How the server's certificate is checked on an `https`/`wss` link.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum CertificateCheck {
    /// The system's trust store (and the host name).
    #[default]
    SystemRoots,
    /// Only the CA certificate(s) in this PEM file (and the host name); the system store is not used.
    CaFile(PathBuf),
    /// Exactly the certificate whose DER encoding has this SHA-256 (the host name is not checked).
    Sha256Pin([u8; 32]),
}

impl CertificateCheck {
    /// From the front ends' settings (`--ca-file`/`caFile`, `--cert-sha256`/`certSha256`; empty
    /// counts as absent): at most one of the two, neither is the system's trust store.
    pub fn from_settings(ca_file: Option<&str>, cert_sha256: Option<&str>) -> Result<Self, String> {
        let ca_file = ca_file.filter(|s| !s.is_empty());
        let pin = cert_sha256.filter(|s| !s.trim().is_empty());
        match (ca_file, pin) {
            (Some(_), Some(_)) => Err("a CA file and a certificate fingerprint: give one".into()),
            (Some(path), None) => Ok(CertificateCheck::CaFile(PathBuf::from(path))),
            (None, Some(text)) => parse_sha256_fingerprint(text).map(CertificateCheck::Sha256Pin),
            (None, None) => Ok(CertificateCheck::SystemRoots),
        }
    }
}

/// Reads a SHA-256 fingerprint as people copy it: 64 hex digits, with or without `:` between the
/// bytes (`openssl x509 -fingerprint -sha256` prints `sha256 Fingerprint=AB:CD:...`), any case.
pub fn parse_sha256_fingerprint(text: &str) -> Result<[u8; 32], String> {
    let t = text.trim();
    let t = t.split_once('=').map_or(t, |(_, v)| v).trim();
    let hex: String = t.chars().filter(|c| *c != ':').collect();
    let bad = || format!("not a SHA-256 fingerprint (64 hex digits, `:` between bytes allowed): {text:?}");
    if hex.len() != 64 {
        return Err(bad());
    }
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(hex.get(2 * i..2 * i + 2).ok_or_else(bad)?, 16).map_err(|_| bad())?;
    }
    Ok(out)
}

/// `AB:CD:...`, as `openssl x509 -fingerprint -sha256` prints it.
pub fn format_fingerprint(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02X}")).collect::<Vec<_>>().join(":")
}

/// The SHA-256 of a certificate's DER encoding (what a pin names).
pub fn certificate_sha256(der: &[u8]) -> [u8; 32] {
    let digest = ring::digest::digest(&ring::digest::SHA256, der);
    let mut out = [0u8; 32];
    out.copy_from_slice(digest.as_ref());
    out
}

/// Why a link could not be prepared: for good, or for now (the network; tried again with backoff).
pub(crate) enum LinkFailure {
    Fatal(TransportError),
    Retry(String),
}

/// Whether an address is this machine's loopback (IPv4-mapped IPv6 included).
pub fn is_loopback(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_loopback(),
        IpAddr::V6(v6) => v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback()),
    }
}

/// The link's checks, with the connector built once (a pinned one after its first check).
pub(crate) struct Link {
    check: CertificateCheck,
    connector: Option<TlsConnector>,
}

const PIN_CHECK_TIMEOUT: Duration = Duration::from_secs(10);

impl Link {
    pub(crate) fn new(check: CertificateCheck) -> Self {
        Link { check, connector: None }
    }

    /// Checks `server_url` and returns the TLS connector for an `https`/`wss` one (`None` for a
    /// loopback `http` one).
    pub(crate) async fn prepare(&mut self, server_url: &str) -> Result<Option<TlsConnector>, LinkFailure> {
        let url = url::Url::parse(server_url)
            .map_err(|e| insecure(format!("oh-executor: the server URL {server_url:?} is not a URL: {e}")))?;
        let host =
            url.host().ok_or_else(|| insecure(format!("oh-executor: the server URL {server_url} has no host")))?;
        let port = url.port_or_known_default().unwrap_or(80);
        match url.scheme() {
            "http" | "ws" => {
                if self.check != CertificateCheck::SystemRoots {
                    return Err(insecure(format!(
                        "oh-executor: a CA file or certificate fingerprint was given, but {server_url} is plain http: \
                         there is no certificate to check. Use https://"
                    )));
                }
                self.check_loopback(server_url, host, port).await?;
                Ok(None)
            }
            "https" | "wss" => {
                if self.connector.is_none() {
                    let domain = match host {
                        url::Host::Domain(d) => d.to_string(),
                        url::Host::Ipv4(ip) => ip.to_string(),
                        url::Host::Ipv6(ip) => ip.to_string(),
                    };
                    self.connector = Some(self.build(server_url, &domain, port).await?);
                }
                Ok(self.connector.clone())
            }
            other => Err(insecure(format!(
                "oh-executor: the server URL {server_url} has scheme {other:?}; use https:// (or http:// to this machine)"
            ))),
        }
    }

    /// Plain http only when every address of the host is loopback (checked by resolving it: a name
    /// is not trusted by its spelling).
    async fn check_loopback(&self, server_url: &str, host: url::Host<&str>, port: u16) -> Result<(), LinkFailure> {
        let addresses: Vec<IpAddr> = match host {
            url::Host::Ipv4(ip) => vec![IpAddr::V4(ip)],
            url::Host::Ipv6(ip) => vec![IpAddr::V6(ip)],
            url::Host::Domain(name) => match tokio::net::lookup_host((name, port)).await {
                Ok(found) => found.map(|a| a.ip()).collect(),
                Err(e) => return Err(LinkFailure::Retry(format!("cannot resolve {name}: {e}"))),
            },
        };
        let outside: Vec<String> = addresses.iter().filter(|ip| !is_loopback(**ip)).map(IpAddr::to_string).collect();
        if addresses.is_empty() || !outside.is_empty() {
            return Err(insecure(format!(
                "oh-executor: refusing plain http to {server_url}: {host} is not only this machine (it resolves to {}), \
                 and over a network the agent's commands, file contents and outputs would travel readable and alterable \
                 by anyone on the way. Use https:// with a server that serves TLS (docs/remote.md); plain http is for \
                 loopback addresses only",
                if outside.is_empty() { "no address".to_string() } else { outside.join(", ") }
            )));
        }
        Ok(())
    }

    async fn build(&self, server_url: &str, domain: &str, port: u16) -> Result<TlsConnector, LinkFailure> {
        let mut builder = TlsConnector::builder();
        builder.min_protocol_version(Some(native_tls::Protocol::Tlsv12));
        match &self.check {
            CertificateCheck::SystemRoots => {}
            CertificateCheck::CaFile(path) => {
                let pem = std::fs::read(path).map_err(|e| {
                    certificate(format!("oh-executor: cannot read the CA file {}: {e}", path.display()))
                })?;
                let certs = Certificate::stack_from_pem(&pem).ok().filter(|c| !c.is_empty()).ok_or_else(|| {
                    certificate(format!("oh-executor: the CA file {} holds no PEM certificate", path.display()))
                })?;
                builder.disable_built_in_roots(true);
                for cert in certs {
                    builder.add_root_certificate(cert);
                }
            }
            CertificateCheck::Sha256Pin(pin) => {
                let leaf = pinned_leaf(server_url, domain, port, pin).await?;
                builder.disable_built_in_roots(true);
                builder.add_root_certificate(leaf);
                builder.danger_accept_invalid_hostnames(true);
            }
        }
        builder.build().map_err(|e| certificate(format!("oh-executor: cannot set up TLS: {e}")))
    }
}

/// Opens a TLS connection that accepts any certificate, only to read the server's leaf and
/// compare its SHA-256 with the pin; nothing is sent over it.
async fn pinned_leaf(server_url: &str, domain: &str, port: u16, pin: &[u8; 32]) -> Result<Certificate, LinkFailure> {
    let any = TlsConnector::builder()
        .danger_accept_invalid_certs(true)
        .danger_accept_invalid_hostnames(true)
        .build()
        .map_err(|e| certificate(format!("oh-executor: cannot set up TLS: {e}")))?;
    let attempt = async {
        let tcp = tokio::net::TcpStream::connect((domain, port)).await.map_err(|e| e.to_string())?;
        let tls = tokio_native_tls::TlsConnector::from(any).connect(domain, tcp).await.map_err(|e| e.to_string())?;
        tls.get_ref().peer_certificate().map_err(|e| e.to_string())
    };
    let leaf = match tokio::time::timeout(PIN_CHECK_TIMEOUT, attempt).await {
        Ok(Ok(Some(cert))) => cert,
        Ok(Ok(None)) => {
            return Err(certificate(format!("oh-executor: the server at {server_url} sent no certificate")))
        }
        Ok(Err(e)) => return Err(LinkFailure::Retry(format!("TLS connection to {server_url} failed: {e}"))),
        Err(_) => return Err(LinkFailure::Retry(format!("TLS connection to {server_url} timed out"))),
    };
    let der = leaf.to_der().map_err(|e| certificate(format!("oh-executor: unreadable server certificate: {e}")))?;
    let seen = certificate_sha256(&der);
    if &seen != pin {
        return Err(certificate(format!(
            "oh-executor: refusing the server at {server_url}: its certificate's SHA-256 fingerprint is {}, not the \
             pinned {}. Another server, or a middle box that terminates TLS, answered; nothing was sent to it",
            format_fingerprint(&seen),
            format_fingerprint(pin)
        )));
    }
    Ok(leaf)
}

/// When a failed connect was the TLS library rejecting the server's certificate, the executor's
/// words for it (never retried: a certificate does not become trusted by waiting). A TLS failure
/// that names no certificate (a reset mid-handshake) is left to the reconnect loop.
pub(crate) fn certificate_rejection(
    err: &(dyn std::error::Error + 'static),
    server_url: &str,
    check: &CertificateCheck,
) -> Option<TransportError> {
    let mut source = Some(err);
    while let Some(e) = source {
        if let Some(tls) = e.downcast_ref::<native_tls::Error>() {
            let text = tls.to_string();
            if !text.to_lowercase().contains("certificate") {
                return None;
            }
            let hint = match check {
                CertificateCheck::SystemRoots => {
                    "it is not signed by a CA of the system's trust store, or not for this host name: name its CA \
                     with --ca-file (caFile), or pin it with --cert-sha256 (certSha256)"
                }
                CertificateCheck::CaFile(_) => "it is not signed by the CA file's CA, or not for this host name",
                CertificateCheck::Sha256Pin(_) => {
                    "this connection presented another certificate than the pinned one the check saw, or the pinned \
                     certificate is not self-signed (the TLS library takes only a self-signed certificate as the sole \
                     anchor: name a CA-issued one's CA with --ca-file)"
                }
            };
            return Some(certificate(format!(
                "oh-executor: refusing the server at {server_url}: its TLS certificate was not accepted ({text}): {hint}. \
                 Nothing was sent to it"
            ))
            .into_error());
        }
        source = e.source();
    }
    None
}

fn insecure(message: String) -> LinkFailure {
    LinkFailure::Fatal(TransportError::InsecureUrl(message))
}

fn certificate(message: String) -> LinkFailure {
    LinkFailure::Fatal(TransportError::Certificate(message))
}

impl LinkFailure {
    fn into_error(self) -> TransportError {
        match self {
            LinkFailure::Fatal(e) => e,
            LinkFailure::Retry(m) => TransportError::Unreachable(m),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_read_as_openssl_prints_them() {
        let colons = "sha256 Fingerprint=0A:1B:2C:3D:4E:5F:60:71:82:93:A4:B5:C6:D7:E8:F9:0A:1B:2C:3D:4E:5F:60:71:82:93:A4:B5:C6:D7:E8:F9";
        let bytes = parse_sha256_fingerprint(colons).unwrap();
        assert_eq!(bytes[0], 0x0a);
        assert_eq!(bytes[31], 0xf9);
        assert_eq!(parse_sha256_fingerprint(&format_fingerprint(&bytes).to_lowercase().replace(':', "")), Ok(bytes));
        assert!(parse_sha256_fingerprint("abcd").is_err());
        assert!(parse_sha256_fingerprint(&"zz".repeat(32)).is_err());
    }

    #[test]
    fn settings_give_at_most_one_check() {
        assert_eq!(CertificateCheck::from_settings(None, Some("")), Ok(CertificateCheck::SystemRoots));
        assert_eq!(
            CertificateCheck::from_settings(Some("/ca.pem"), None),
            Ok(CertificateCheck::CaFile("/ca.pem".into()))
        );
        assert_eq!(
            CertificateCheck::from_settings(None, Some(&"ab".repeat(32))),
            Ok(CertificateCheck::Sha256Pin([0xab; 32]))
        );
        assert!(CertificateCheck::from_settings(Some("/ca.pem"), Some(&"ab".repeat(32)))
            .unwrap_err()
            .contains("give one"));
        assert!(CertificateCheck::from_settings(None, Some("ab")).is_err());
    }

    #[test]
    fn loopback_is_decided_by_address() {
        assert!(is_loopback("127.0.0.1".parse().unwrap()));
        assert!(is_loopback("127.9.9.9".parse().unwrap()));
        assert!(is_loopback("::1".parse().unwrap()));
        assert!(is_loopback("::ffff:127.0.0.1".parse().unwrap()));
        assert!(!is_loopback("10.0.0.1".parse().unwrap()));
        assert!(!is_loopback("0.0.0.0".parse().unwrap()));
        assert!(!is_loopback("::ffff:10.0.0.1".parse().unwrap()));
    }

    fn block_on<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(f)
    }

    fn refusal(url: &str, check: CertificateCheck) -> Option<TransportError> {
        match block_on(Link::new(check).prepare(url)) {
            Ok(_) => None,
            Err(LinkFailure::Fatal(e)) => Some(e),
            Err(LinkFailure::Retry(m)) => panic!("retry: {m}"),
        }
    }

    #[test]
    fn plain_http_only_to_loopback() {
        for ok in ["http://127.0.0.1:3000", "http://[::1]:3000", "ws://127.0.0.1:9", "http://localhost:3000"] {
            assert_eq!(refusal(ok, CertificateCheck::SystemRoots), None, "{ok}");
        }
        for far in ["http://10.1.2.3:3000", "http://[fe80::1]:3000", "http://0.0.0.0:3000", "ws://192.0.2.1"] {
            let e = refusal(far, CertificateCheck::SystemRoots).unwrap_or_else(|| panic!("{far} accepted"));
            assert_eq!(e.code(), crate::ErrorCode::Refused);
            assert!(e.to_string().contains("refusing plain http") && e.to_string().contains("https://"), "{e}");
        }
        // A CA or pin with plain http: the user meant TLS.
        assert!(refusal("http://127.0.0.1:1", CertificateCheck::Sha256Pin([0; 32])).is_some());
        assert!(refusal("ftp://127.0.0.1:1", CertificateCheck::SystemRoots).is_some());
    }
}
