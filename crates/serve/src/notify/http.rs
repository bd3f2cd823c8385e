//! One HTTP POST to a webhook (or a push service), over plain HTTP or TLS (rustls, checked against the system's
//! certificate authorities), with a deadline: a chat service that does not answer holds up
//! nothing else.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper_util::rt::TokioIo;

/// How long a webhook may take.
pub const DEADLINE: Duration = Duration::from_secs(10);

/// Where the system keeps the certificate authorities (Debian's `ca-certificates`).
const SYSTEM_ROOTS: &str = "/etc/ssl/certs/ca-certificates.crt";

/// A webhook's address, split.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub tls: bool,
    pub host: String,
    pub port: u16,
    /// The path and query, from its `/`.
    pub path: String,
}

impl Target {
    pub fn parse(url: &str) -> Result<Target, String> {
        let (tls, rest) = match url.split_once("://") {
            Some(("https", rest)) => (true, rest),
            Some(("http", rest)) => (false, rest),
            _ => return Err(format!("{url:?} is not an http or https URL")),
        };
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        if authority.contains('@') {
            return Err(format!(
                "{url:?} carries credentials: name them with secret_env"
            ));
        }
        let default = if tls { 443 } else { 80 };
        let (host, port) = match authority.rsplit_once(':') {
            Some((host, port)) if !port.contains(']') => (
                host,
                port.parse::<u16>()
                    .map_err(|_| format!("{url:?} has no valid port"))?,
            ),
            _ => (authority, default),
        };
        let host = host.trim_start_matches('[').trim_end_matches(']');
        if host.is_empty() {
            return Err(format!("{url:?} names no host"));
        }
        Ok(Target {
            tls,
            host: host.to_string(),
            port,
            path: path.to_string(),
        })
    }

    /// Where it is on the web: `https://host[:port]`.
    pub fn origin(&self) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://{}", self.authority())
    }

    /// Its host and (unless the scheme's own) port, as a request's `Host` names it.
    pub fn authority(&self) -> String {
        let host = match self.host.contains(':') {
            true => format!("[{}]", self.host),
            false => self.host.clone(),
        };
        match (self.tls, self.port) {
            (true, 443) | (false, 80) => host,
            _ => format!("{host}:{}", self.port),
        }
    }
}

/// POSTs `body` to `target` with `headers`; the answer's status, or why there is none.
pub async fn post(
    target: &Target,
    headers: &[(String, String)],
    body: Vec<u8>,
) -> Result<u16, String> {
    tokio::time::timeout(DEADLINE, send(target, headers, body))
        .await
        .map_err(|_| format!("no answer within {} s", DEADLINE.as_secs()))?
}

async fn send(target: &Target, headers: &[(String, String)], body: Vec<u8>) -> Result<u16, String> {
    let tcp = tokio::net::TcpStream::connect((target.host.as_str(), target.port))
        .await
        .map_err(|e| format!("cannot connect: {e}"))?;
    let mut request = hyper::Request::post(target.path.as_str()).header("host", target.authority());
    for (name, value) in headers {
        request = request.header(name.as_str(), value.as_str());
    }
    let request = request
        .body(Full::new(Bytes::from(body)))
        .map_err(|e| e.to_string())?;
    if target.tls {
        let name = rustls::pki_types::ServerName::try_from(target.host.clone())
            .map_err(|e| e.to_string())?;
        let stream = tokio_rustls::TlsConnector::from(client_config()?)
            .connect(name, tcp)
            .await
            .map_err(|e| format!("TLS: {e}"))?;
        exchange(TokioIo::new(stream), request).await
    } else {
        exchange(TokioIo::new(tcp), request).await
    }
}

async fn exchange<Io>(io: Io, request: hyper::Request<Full<Bytes>>) -> Result<u16, String>
where
    Io: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let (mut sender, connection) = hyper::client::conn::http1::handshake(io)
        .await
        .map_err(|e| e.to_string())?;
    tokio::spawn(connection);
    let answer = sender
        .send_request(request)
        .await
        .map_err(|e| e.to_string())?;
    Ok(answer.status().as_u16())
}

/// TLS checked against the system's certificate authorities.
fn client_config() -> Result<Arc<rustls::ClientConfig>, String> {
    use rustls::pki_types::{CertificateDer, pem::PemObject};
    let mut roots = rustls::RootCertStore::empty();
    let certificates = CertificateDer::pem_file_iter(SYSTEM_ROOTS)
        .map_err(|e| format!("cannot read {SYSTEM_ROOTS}: {e}"))?;
    for certificate in certificates.flatten() {
        let _ = roots.add(certificate);
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(config))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_is_split_and_a_bad_one_says_why() {
        let target = Target::parse("https://ntfy.sh/my-desk?x=1").unwrap();
        assert_eq!(
            (
                target.tls,
                target.host.as_str(),
                target.port,
                target.path.as_str()
            ),
            (true, "ntfy.sh", 443, "/my-desk?x=1")
        );
        assert_eq!(target.authority(), "ntfy.sh");
        let local = Target::parse("http://127.0.0.1:9000").unwrap();
        assert_eq!((local.port, local.path.as_str()), (9000, "/"));
        assert_eq!(
            Target::parse("http://[::1]:81/h").unwrap().authority(),
            "[::1]:81"
        );
        for (bad, says) in [
            ("ftp://x", "http or https"),
            ("http://user:pw@x/", "credentials"),
            ("http://x:port/", "valid port"),
            ("https:///path", "no host"),
        ] {
            let err = Target::parse(bad).unwrap_err();
            assert!(err.contains(says), "{bad}: {err}");
        }
    }
}
