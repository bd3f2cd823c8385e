//! HTTPS for `baton serve --tls-cert FILE --tls-key FILE`: rustls (its `ring` provider, TLS
//! 1.2 and 1.3), the certificate chain and key read from PEM files once at start. A file that
//! is missing or does not parse is said plainly before anything listens.

use std::sync::Arc;

use baton_api::Error;
use baton_core::ErrorKind;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use crate::Tls;

pub fn acceptor(tls: &Tls) -> Result<tokio_rustls::TlsAcceptor, Error> {
    let bad = |what: &str, path: &std::path::Path, e: String| {
        Error::new(
            ErrorKind::InvalidInput,
            format!("--tls-{what} {}: {e}", path.display()),
        )
    };
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&tls.certificate)
        .map_err(|e| bad("cert", &tls.certificate, e.to_string()))?
        .collect::<Result<_, _>>()
        .map_err(|e| bad("cert", &tls.certificate, e.to_string()))?;
    if chain.is_empty() {
        return Err(bad("cert", &tls.certificate, "no certificate in it".into()));
    }
    let key = PrivateKeyDer::from_pem_file(&tls.key).map_err(|e| {
        bad(
            "key",
            &tls.key,
            format!("no private key read from it ({e})"),
        )
    })?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| {
            Error::new(
                ErrorKind::InvalidInput,
                format!("--tls-cert and --tls-key do not make a pair: {e}"),
            )
        })?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(tokio_rustls::TlsAcceptor::from(Arc::new(config)))
}
