//! Throwaway certificates for TLS tests, made with the `openssl` command line tool in the
//! test's temp directory.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// A throwaway CA, a server certificate for 127.0.0.1 and a client certificate
/// (`O=Acme, OU=eng, CN=app`), all P-256.
pub struct Certs {
    pub ca: PathBuf,
    pub server_cert: PathBuf,
    pub server_key: PathBuf,
    pub client_cert: PathBuf,
    pub client_key: PathBuf,
}

/// Runs `openssl ARGS` in `dir`.
pub fn openssl(dir: &Path, args: &[&str]) {
    super::run_ok(
        Command::new("openssl").current_dir(dir).args(args),
        Duration::from_secs(60),
    );
}

impl Certs {
    /// The set, the server certificate naming localhost and 127.0.0.1.
    pub fn make(dir: &Path) -> Certs {
        Self::make_for(dir, "DNS:localhost,IP:127.0.0.1")
    }

    /// The set, the server certificate naming `san` (an openssl subjectAltName value).
    pub fn make_for(dir: &Path, san: &str) -> Certs {
        let ec = [
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
        ];
        let mut ca = vec!["req", "-x509"];
        ca.extend(ec);
        ca.extend([
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
            "-days",
            "2",
            "-subj",
            "/CN=Cohort Test CA",
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,keyCertSign,cRLSign",
        ]);
        openssl(dir, &ca);
        for (name, subject, ext) in [
            (
                "server",
                "/CN=localhost",
                format!("subjectAltName={san}\nextendedKeyUsage=serverAuth\n"),
            ),
            (
                "client",
                "/O=Acme/OU=eng/CN=app",
                "extendedKeyUsage=clientAuth\n".to_string(),
            ),
        ] {
            let key = format!("{name}.key");
            let csr = format!("{name}.csr");
            let pem = format!("{name}.pem");
            let extfile = format!("{name}.ext");
            std::fs::write(
                dir.join(&extfile),
                format!("basicConstraints=CA:FALSE\nkeyUsage=digitalSignature\n{ext}"),
            )
            .unwrap();
            let mut req = vec!["req"];
            req.extend(ec);
            req.extend(["-keyout", &key, "-out", &csr, "-subj", subject]);
            openssl(dir, &req);
            openssl(
                dir,
                &[
                    "x509",
                    "-req",
                    "-in",
                    &csr,
                    "-CA",
                    "ca.pem",
                    "-CAkey",
                    "ca.key",
                    "-CAcreateserial",
                    "-out",
                    &pem,
                    "-days",
                    "2",
                    "-extfile",
                    &extfile,
                ],
            );
        }
        Certs {
            ca: dir.join("ca.pem"),
            server_cert: dir.join("server.pem"),
            server_key: dir.join("server.key"),
            client_cert: dir.join("client.pem"),
            client_key: dir.join("client.key"),
        }
    }
}
