//! TLS to the PostgreSQL registry, as libpq's `sslmode` and `sslrootcert` in the URL ask: the
//! driver (`tokio-postgres`) knows only `disable`, `prefer` and `require`, and with rustls it
//! would check every certificate against the system's roots and the host name — so a server
//! with a certificate of its own (Debian's default, a managed database's private CA) could
//! not be reached at all, not even with `prefer`. These two options are read here, taken out
//! of the URL the driver parses, and turn into rustls's certificate check:
//!
//! | `sslmode` | TLS | the server's certificate |
//! | --- | --- | --- |
//! | `disable` | never | — |
//! | `prefer` (default) | when the server offers it | not checked |
//! | `require` | always | not checked; with `sslrootcert`, its chain (as `verify-ca`) |
//! | `verify-ca` | always | its chain, to `sslrootcert` |
//! | `verify-full` | always | its chain, and the URL's host is a name it is for |
//!
//! `sslrootcert=PATH` is a PEM file of the certificates to trust (default, as libpq:
//! `~/.postgresql/root.crt`); `sslrootcert=system` trusts the system's roots and makes
//! `verify-full` the default (a weaker mode with it is refused, as libpq 16 does). A check
//! that is not made is a check no one relies on: `prefer` and `require` protect against
//! listening, not against an impostor, exactly as with `psql`.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result, anyhow, bail};
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, SignatureScheme};

/// libpq's `sslmode` values this registry takes (`allow`, plain text first, is refused).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslMode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl SslMode {
    fn parse(value: &str) -> Result<SslMode> {
        Ok(match value {
            "disable" => SslMode::Disable,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            other => bail!(
                "sslmode={other}: not one of disable, prefer, require, verify-ca, verify-full"
            ),
        })
    }

    /// What the driver is told: whether TLS is used at all.
    fn driver(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Prefer => "prefer",
            SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => "require",
        }
    }
}

/// Where the certificates to trust come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Roots {
    /// A PEM file.
    File(PathBuf),
    /// The system's store (`sslrootcert=system`).
    System,
}

/// How the server's certificate is checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Check {
    /// Not at all (`prefer`, `require`): the connection is private, the server unproven.
    Nothing,
    /// Its chain to these roots; `names`: also that it is for the URL's host.
    Chain { roots: Roots, names: bool },
}

/// The URL's TLS options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tls {
    pub mode: SslMode,
    pub check: Check,
}

/// Split a `postgres://` URL into the URL the driver parses (`sslrootcert` taken out,
/// `sslmode` one the driver knows) and how TLS is used. `home`: where `~/.postgresql/root.crt`
/// is looked for.
pub fn split(url: &str, home: Option<PathBuf>) -> Result<(String, Tls)> {
    let (base, query) = match url.split_once('?') {
        Some((base, query)) => (base, query),
        None => (url, ""),
    };
    let mut mode = None;
    let mut root = None;
    let mut kept = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        match key {
            "sslmode" => mode = Some(SslMode::parse(&decode(value)?)?),
            "sslrootcert" => root = Some(decode(value)?),
            _ => kept.push(pair),
        }
    }
    let system = root.as_deref() == Some("system");
    let mode = match mode {
        Some(mode) => mode,
        // libpq 16: trusting the system's roots means checking the name too.
        None if system => SslMode::VerifyFull,
        None => SslMode::Prefer,
    };
    if system && mode != SslMode::VerifyFull {
        bail!(
            "sslrootcert=system needs sslmode=verify-full (a public CA's certificate proves nothing without its name)"
        );
    }
    let roots = match root {
        Some(r) if r == "system" => Some(Roots::System),
        Some(path) => Some(Roots::File(PathBuf::from(path))),
        None => None,
    };
    let check = match (mode, roots) {
        (SslMode::Disable | SslMode::Prefer, _) | (SslMode::Require, None) => Check::Nothing,
        (SslMode::Require | SslMode::VerifyCa, Some(roots)) => Check::Chain {
            roots,
            names: false,
        },
        (SslMode::VerifyFull, Some(roots)) => Check::Chain { roots, names: true },
        (SslMode::VerifyCa | SslMode::VerifyFull, None) => {
            let default = home.map(|h| h.join(".postgresql/root.crt"));
            match default.filter(|p| p.exists()) {
                Some(path) => Check::Chain {
                    roots: Roots::File(path),
                    names: mode == SslMode::VerifyFull,
                },
                None => bail!(
                    "sslmode={}: no certificate to check the server's against: give sslrootcert=PATH (a PEM file; default ~/.postgresql/root.crt) or sslrootcert=system",
                    if mode == SslMode::VerifyFull {
                        "verify-full"
                    } else {
                        "verify-ca"
                    }
                ),
            }
        }
    };
    kept.push(match mode.driver() {
        "disable" => "sslmode=disable",
        "prefer" => "sslmode=prefer",
        _ => "sslmode=require",
    });
    Ok((format!("{base}?{}", kept.join("&")), Tls { mode, check }))
}

/// A query value with its `%XX` escapes decoded.
fn decode(value: &str) -> Result<String> {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = value
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| anyhow!("{value:?}: a bad %-escape"))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| anyhow!("{value:?}: not UTF-8 once decoded"))
}

impl Tls {
    /// The rustls configuration that makes this check.
    pub fn client_config(&self) -> Result<rustls::ClientConfig> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let chain = match &self.check {
            Check::Nothing => None,
            Check::Chain { roots, .. } => {
                let store = Arc::new(load(roots)?);
                Some(
                    WebPkiServerVerifier::builder_with_provider(store, provider.clone())
                        .build()
                        .map_err(|err| anyhow!("TLS: {err}"))?,
                )
            }
        };
        let names = matches!(self.check, Check::Chain { names: true, .. });
        Ok(
            rustls::ClientConfig::builder_with_provider(provider.clone())
                .with_safe_default_protocol_versions()
                .map_err(|err| anyhow!("TLS: {err}"))?
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(Verifier {
                    chain,
                    names,
                    provider,
                }))
                .with_no_client_auth(),
        )
    }
}

/// The certificates to trust.
fn load(roots: &Roots) -> Result<rustls::RootCertStore> {
    let mut store = rustls::RootCertStore::empty();
    match roots {
        Roots::System => {
            for cert in rustls_native_certs::load_native_certs().certs {
                // A certificate the system store holds but rustls cannot use is skipped, as
                // every other client does.
                let _ = store.add(cert);
            }
        }
        Roots::File(path) => {
            let text =
                std::fs::read(path).with_context(|| format!("sslrootcert {}", path.display()))?;
            for cert in CertificateDer::pem_slice_iter(&text) {
                let cert = cert.map_err(|err| {
                    anyhow!(
                        "sslrootcert {}: not a PEM certificate: {err}",
                        path.display()
                    )
                })?;
                store.add(cert).map_err(|err| {
                    anyhow!(
                        "sslrootcert {}: a certificate rustls cannot use: {err}",
                        path.display()
                    )
                })?;
            }
        }
    }
    if store.is_empty() {
        bail!(
            "sslrootcert {}: no certificate in it",
            match roots {
                Roots::System => "system".to_string(),
                Roots::File(path) => path.display().to_string(),
            }
        );
    }
    Ok(store)
}

/// The certificate check of [`Check`]: the handshake's signatures are always verified (the
/// server holds the key of the certificate it sent); the certificate itself as asked.
#[derive(Debug)]
struct Verifier {
    chain: Option<Arc<WebPkiServerVerifier>>,
    names: bool,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(chain) = &self.chain else {
            return Ok(ServerCertVerified::assertion());
        };
        match chain.verify_server_cert(end_entity, intermediates, server_name, ocsp, now) {
            // verify-ca: the chain is checked first; only the name may be wrong.
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if !self.names => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split_ok(url: &str) -> (String, Tls) {
        split(url, None).unwrap()
    }

    #[test]
    fn the_driver_sees_only_the_modes_it_knows_and_never_sslrootcert() {
        let (url, tls) = split_ok("postgres://u@h/db");
        assert_eq!(url, "postgres://u@h/db?sslmode=prefer");
        assert_eq!((tls.mode, tls.check), (SslMode::Prefer, Check::Nothing));
        let (url, tls) = split_ok("postgres://u@h/db?connect_timeout=5&sslmode=require");
        assert_eq!(url, "postgres://u@h/db?connect_timeout=5&sslmode=require");
        assert_eq!(tls.check, Check::Nothing);
        let (url, tls) =
            split_ok("postgres://u@h/db?sslmode=verify-full&sslrootcert=%2Fetc%2Fca%20x.pem");
        assert_eq!(url, "postgres://u@h/db?sslmode=require");
        assert_eq!(
            tls.check,
            Check::Chain {
                roots: Roots::File("/etc/ca x.pem".into()),
                names: true
            }
        );
        let (_, tls) = split_ok("postgres://u@h/db?sslmode=require&sslrootcert=/ca.pem");
        assert_eq!(
            tls.check,
            Check::Chain {
                roots: Roots::File("/ca.pem".into()),
                names: false
            }
        );
        let (url, tls) = split_ok("postgres://u@h/db?sslrootcert=system");
        assert_eq!(url, "postgres://u@h/db?sslmode=require");
        assert_eq!(tls.mode, SslMode::VerifyFull);
        let (_, tls) = split_ok("postgres://u@h/db?sslmode=disable");
        assert_eq!(tls.mode, SslMode::Disable);
    }

    #[test]
    fn a_check_that_cannot_be_made_is_refused_not_skipped() {
        for (url, says) in [
            ("postgres://h/db?sslmode=allow", "not one of"),
            (
                "postgres://h/db?sslmode=verify-ca",
                "no certificate to check",
            ),
            (
                "postgres://h/db?sslmode=verify-full",
                "no certificate to check",
            ),
            (
                "postgres://h/db?sslmode=require&sslrootcert=system",
                "needs sslmode=verify-full",
            ),
            ("postgres://h/db?sslrootcert=%zz", "bad %-escape"),
        ] {
            let err = split(url, Some("/nonexistent".into())).unwrap_err();
            assert!(format!("{err:#}").contains(says), "{url}: {err:#}");
        }
        // libpq's default root file is used when it is there.
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir(home.path().join(".postgresql")).unwrap();
        std::fs::write(home.path().join(".postgresql/root.crt"), "").unwrap();
        let (_, tls) = split(
            "postgres://h/db?sslmode=verify-ca",
            Some(home.path().to_path_buf()),
        )
        .unwrap();
        assert_eq!(
            tls.check,
            Check::Chain {
                roots: Roots::File(home.path().join(".postgresql/root.crt")),
                names: false
            }
        );
        // An empty or unreadable root file is one error, before any connection.
        let err = tls.client_config().unwrap_err();
        assert!(
            format!("{err:#}").contains("no certificate in it"),
            "{err:#}"
        );
    }
}
