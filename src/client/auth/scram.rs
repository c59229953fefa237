//! The client side of SCRAM-SHA-256/512 (RFC 5802, RFC 7677), as Kafka's `ScramSaslClient`
//! runs it. Pure: the nonce comes in, messages go out. The hashing primitives are the broker's
//! (`security::scram`), so both sides compute the same keys the same way.
//!
//! ```text
//!  start        ─> client-first  n,,n=user,r=cnonce
//!  server-first <─ r=cnonce+snonce,s=salt,i=iterations
//!  respond      ─> client-final  c=biws,r=cnonce+snonce,p=ClientKey ^ HMAC(StoredKey, AuthMessage)
//!  server-final <─ v=HMAC(ServerKey, AuthMessage)   checked by ServerProof::verify
//! ```

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;

use crate::security::scram::{
    constant_time_eq, salted_password, ScramMechanism, ITERATIONS_MAX, ITERATIONS_MIN,
};

/// Why the exchange failed on the client side (the messages are Kafka's client's).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScramClientError {
    /// A server message that is not what RFC 5802 says it is.
    #[error("Invalid SCRAM server message: {0}")]
    Malformed(&'static str),
    /// The server nonce does not extend ours.
    #[error("Invalid server nonce: does not start with client nonce")]
    Nonce,
    /// Iterations outside what Kafka stores (4096..=16384).
    #[error("Requested iterations {0} is outside [{ITERATIONS_MIN}, {ITERATIONS_MAX}] for {1}")]
    Iterations(u64, &'static str),
    /// The server ended the exchange with `e=`.
    #[error("Sasl authentication using {0} failed with error: {1}")]
    Server(&'static str, String),
    /// The server could not prove it knows the credential.
    #[error("Invalid server signature in server final message")]
    ServerSignature,
}

/// `saslname` of RFC 5802: `,` and `=` escaped.
fn encode_saslname(name: &str) -> String {
    name.replace('=', "=3D").replace(',', "=2C")
}

/// An exchange after the client-first message.
#[derive(Debug)]
pub struct ScramClient {
    mechanism: ScramMechanism,
    client_nonce: String,
    client_first_bare: String,
}

/// What the server-final message must carry. Its Debug shows nothing: it is derived from the
/// password.
pub struct ServerProof {
    mechanism: ScramMechanism,
    expected: Vec<u8>,
}

impl std::fmt::Debug for ServerProof {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerProof").finish_non_exhaustive()
    }
}

impl ScramClient {
    /// The client-first message for `username`; `client_nonce` is fresh printable randomness
    /// without commas.
    pub fn start(
        mechanism: ScramMechanism,
        username: &str,
        client_nonce: &str,
    ) -> (ScramClient, Vec<u8>) {
        let bare = format!("n={},r={client_nonce}", encode_saslname(username));
        let first = format!("n,,{bare}").into_bytes();
        (
            ScramClient {
                mechanism,
                client_nonce: client_nonce.to_owned(),
                client_first_bare: bare,
            },
            first,
        )
    }

    /// Takes the server-first message: the client-final message, and what the server must
    /// prove in its last message.
    pub fn respond(
        self,
        server_first: &[u8],
        password: &[u8],
    ) -> Result<(Vec<u8>, ServerProof), ScramClientError> {
        let msg = std::str::from_utf8(server_first)
            .map_err(|_| ScramClientError::Malformed("not UTF-8"))?;
        if msg.starts_with("m=") {
            return Err(ScramClientError::Malformed("mandatory extension"));
        }
        let mut parts = msg.split(',');
        let nonce = parts
            .next()
            .and_then(|p| p.strip_prefix("r="))
            .ok_or(ScramClientError::Malformed("no nonce"))?;
        let salt = parts
            .next()
            .and_then(|p| p.strip_prefix("s="))
            .and_then(|s| B64.decode(s).ok())
            .filter(|s| !s.is_empty())
            .ok_or(ScramClientError::Malformed("no salt"))?;
        let iterations: u64 = parts
            .next()
            .and_then(|p| p.strip_prefix("i="))
            .and_then(|i| i.parse().ok())
            .ok_or(ScramClientError::Malformed("no iteration count"))?;
        // Extensions after the iteration count are allowed and ignored (RFC 5802 section 7).
        if !nonce.starts_with(&self.client_nonce) || nonce.len() <= self.client_nonce.len() {
            return Err(ScramClientError::Nonce);
        }
        // A server asking for more rounds than Kafka ever stores would only burn our CPU.
        let iterations = u32::try_from(iterations)
            .ok()
            .filter(|i| (ITERATIONS_MIN..=ITERATIONS_MAX).contains(i))
            .ok_or(ScramClientError::Iterations(
                iterations,
                self.mechanism.name(),
            ))?;
        let mech = self.mechanism;
        let salted = salted_password(mech, password, &salt, iterations);
        let client_key = mech.client_key(&salted);
        let stored_key = mech.hash(&client_key);
        let without_proof = format!("c=biws,r={nonce}");
        let auth_message = format!("{},{msg},{without_proof}", self.client_first_bare);
        let signature = mech.hmac(&stored_key, auth_message.as_bytes());
        let proof: Vec<u8> = client_key
            .iter()
            .zip(&signature)
            .map(|(k, s)| k ^ s)
            .collect();
        let server_key = mech.hmac(&salted, b"Server Key");
        let expected = mech.hmac(&server_key, auth_message.as_bytes());
        let last = format!("{without_proof},p={}", B64.encode(proof)).into_bytes();
        Ok((
            last,
            ServerProof {
                mechanism: mech,
                expected,
            },
        ))
    }
}

impl ServerProof {
    /// Checks the server-final message.
    pub fn verify(&self, server_final: &[u8]) -> Result<(), ScramClientError> {
        let msg = std::str::from_utf8(server_final)
            .map_err(|_| ScramClientError::Malformed("not UTF-8"))?;
        if let Some(error) = msg.strip_prefix("e=") {
            let error = error.split(',').next().unwrap_or_default();
            return Err(ScramClientError::Server(
                self.mechanism.name(),
                error.to_owned(),
            ));
        }
        let signature = msg
            .split(',')
            .next()
            .and_then(|p| p.strip_prefix("v="))
            .and_then(|v| B64.decode(v).ok())
            .ok_or(ScramClientError::Malformed("no server signature"))?;
        if constant_time_eq(&signature, &self.expected) {
            Ok(())
        } else {
            Err(ScramClientError::ServerSignature)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::security::scram::{ScramCredential, ScramServer};

    #[test]
    fn rfc_7677_example_from_the_client_side() {
        // RFC 7677 section 3: user "user", password "pencil".
        let (client, first) =
            ScramClient::start(ScramMechanism::Sha256, "user", "rOprNGfwEbeRWgbNEkqO");
        assert_eq!(first, b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO");
        let server_first =
            b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
        let (last, proof) = client.respond(server_first, b"pencil").unwrap();
        assert_eq!(
            String::from_utf8(last).unwrap(),
            "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
        );
        proof
            .verify(b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")
            .unwrap();
        assert_eq!(
            proof.verify(b"v=7rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="),
            Err(ScramClientError::ServerSignature)
        );
        assert_eq!(
            proof.verify(b"e=invalid-proof"),
            Err(ScramClientError::Server(
                "SCRAM-SHA-256",
                "invalid-proof".into()
            ))
        );
    }

    #[test]
    fn client_and_broker_agree_for_both_mechanisms_and_refuse_wrong_passwords() {
        for mech in [ScramMechanism::Sha256, ScramMechanism::Sha512] {
            let cred = ScramCredential::new(mech, b"s3cret", b"salty".to_vec(), 4096);
            for (password, ok) in [("s3cret", true), ("guess", false)] {
                let (client, first) = ScramClient::start(mech, "al=i,ce", "clientnonce");
                let (server, server_first) = ScramServer::start(
                    mech,
                    &first,
                    |u| (u == "al=i,ce").then(|| cred.clone()),
                    "servernonce",
                )
                .unwrap();
                let (last, proof) = client.respond(&server_first, password.as_bytes()).unwrap();
                match server.finish(&last) {
                    Ok((user, server_final)) => {
                        assert!(ok, "{password} accepted");
                        assert_eq!(user, "al=i,ce");
                        proof.verify(&server_final).unwrap();
                    }
                    Err(_) => assert!(!ok, "{password} refused"),
                }
            }
        }
    }

    #[test]
    fn hostile_server_messages_are_refused() {
        let respond = |server_first: &[u8]| {
            let (client, _) = ScramClient::start(ScramMechanism::Sha512, "u", "cn");
            client.respond(server_first, b"p").map(|_| ())
        };
        assert_eq!(
            respond(b"r=xxsn,s=c2FsdA==,i=4096"),
            Err(ScramClientError::Nonce)
        );
        assert_eq!(
            respond(b"r=cn,s=c2FsdA==,i=4096"),
            Err(ScramClientError::Nonce)
        );
        assert_eq!(
            respond(b"r=cnsn,s=c2FsdA==,i=100000000"),
            Err(ScramClientError::Iterations(100_000_000, "SCRAM-SHA-512"))
        );
        assert_eq!(
            respond(b"r=cnsn,s=c2FsdA==,i=1"),
            Err(ScramClientError::Iterations(1, "SCRAM-SHA-512"))
        );
        assert!(matches!(
            respond(b"m=ext,r=cnsn"),
            Err(ScramClientError::Malformed(_))
        ));
        assert!(matches!(
            respond(b"r=cnsn,s=!!,i=4096"),
            Err(ScramClientError::Malformed(_))
        ));
        assert!(matches!(
            respond(b"r=cnsn,s=c2FsdA=="),
            Err(ScramClientError::Malformed(_))
        ));
        assert!(matches!(
            respond(&[0xff]),
            Err(ScramClientError::Malformed(_))
        ));
        assert!(respond(b"r=cnsn,s=c2FsdA==,i=4096,x=ext").is_ok());
    }
}
