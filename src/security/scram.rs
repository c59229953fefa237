//! SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677) as Kafka's `ScramSaslServer` runs
//! them, server side.
//!
//! ```text
//!  client-first  n,[a=authzid],n=user,r=cnonce        ─> look the user's credential up
//!  server-first  r=cnonce+snonce,s=base64(salt),i=iterations
//!  client-final  c=base64(gs2 header),r=cnonce+snonce,p=base64(ClientKey ^ ClientSignature)
//!                 ─> H(ClientProof ^ HMAC(StoredKey, AuthMessage)) == StoredKey ?
//!  server-final  v=base64(HMAC(ServerKey, AuthMessage))
//! ```
//!
//! A credential is only `(salt, StoredKey, ServerKey, iterations)`: the password is never
//! kept. Randomness (the server nonce, salts) comes in as arguments: this module is pure.

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use ring::{digest, hmac, pbkdf2};

/// Kafka's bounds on SCRAM iterations (`ScramMechanism.minIterations`, and the 16384 that
/// `kafka-configs.sh` accepts at most).
pub const ITERATIONS_MIN: u32 = 4096;
/// See [`ITERATIONS_MIN`].
pub const ITERATIONS_MAX: u32 = 16_384;

/// One of the two SCRAM mechanisms Kafka serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ScramMechanism {
    /// SCRAM-SHA-256.
    Sha256,
    /// SCRAM-SHA-512.
    Sha512,
}

impl ScramMechanism {
    /// The SASL mechanism name.
    pub fn name(self) -> &'static str {
        match self {
            ScramMechanism::Sha256 => "SCRAM-SHA-256",
            ScramMechanism::Sha512 => "SCRAM-SHA-512",
        }
    }

    /// By SASL mechanism name.
    pub fn from_name(name: &str) -> Option<ScramMechanism> {
        match name {
            "SCRAM-SHA-256" => Some(ScramMechanism::Sha256),
            "SCRAM-SHA-512" => Some(ScramMechanism::Sha512),
            _ => None,
        }
    }

    fn hmac_algorithm(self) -> hmac::Algorithm {
        match self {
            ScramMechanism::Sha256 => hmac::HMAC_SHA256,
            ScramMechanism::Sha512 => hmac::HMAC_SHA512,
        }
    }

    fn digest(self) -> &'static digest::Algorithm {
        match self {
            ScramMechanism::Sha256 => &digest::SHA256,
            ScramMechanism::Sha512 => &digest::SHA512,
        }
    }

    fn pbkdf2(self) -> pbkdf2::Algorithm {
        match self {
            ScramMechanism::Sha256 => pbkdf2::PBKDF2_HMAC_SHA256,
            ScramMechanism::Sha512 => pbkdf2::PBKDF2_HMAC_SHA512,
        }
    }

    /// Bytes of the mechanism's hash (and so of a proof or signature).
    pub fn output_len(self) -> usize {
        self.digest().output_len()
    }
}

/// What the server keeps of a SCRAM password (Kafka's `ScramCredential`).
#[derive(Clone, PartialEq, Eq)]
pub struct ScramCredential {
    /// The mechanism the keys are for.
    pub mechanism: ScramMechanism,
    /// Random salt.
    pub salt: Vec<u8>,
    /// H(ClientKey).
    pub stored_key: Vec<u8>,
    /// HMAC(SaltedPassword, "Server Key").
    pub server_key: Vec<u8>,
    /// PBKDF2 iterations.
    pub iterations: u32,
}

impl std::fmt::Debug for ScramCredential {
    // Never print the keys: a stored key and salt let anyone brute-force the password offline.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScramCredential")
            .field("mechanism", &self.mechanism)
            .field("iterations", &self.iterations)
            .finish_non_exhaustive()
    }
}

impl ScramMechanism {
    /// `HMAC(key, data)` with the mechanism's hash.
    pub fn hmac(self, key: &[u8], data: &[u8]) -> Vec<u8> {
        hmac_sign(self.hmac_algorithm(), key, data)
    }

    /// `H(data)` with the mechanism's hash.
    pub fn hash(self, data: &[u8]) -> Vec<u8> {
        digest::digest(self.digest(), data).as_ref().to_vec()
    }

    /// `ClientKey = HMAC(SaltedPassword, "Client Key")`: the client side's secret, of which
    /// the server keeps only the hash (StoredKey).
    pub fn client_key(self, salted: &[u8]) -> Vec<u8> {
        self.hmac(salted, b"Client Key")
    }
}

fn hmac_sign(alg: hmac::Algorithm, key: &[u8], data: &[u8]) -> Vec<u8> {
    hmac::sign(&hmac::Key::new(alg, key), data)
        .as_ref()
        .to_vec()
}

/// `Hi(password, salt, iterations)` of RFC 5802 (PBKDF2 with the mechanism's HMAC): what an
/// AlterUserScramCredentials request carries instead of the password.
pub fn salted_password(
    mechanism: ScramMechanism,
    password: &[u8],
    salt: &[u8],
    iterations: u32,
) -> Vec<u8> {
    let mut salted = vec![0u8; mechanism.output_len()];
    let rounds = std::num::NonZeroU32::new(iterations.max(1)).unwrap_or(std::num::NonZeroU32::MIN);
    pbkdf2::derive(mechanism.pbkdf2(), rounds, salt, password, &mut salted);
    salted
}

impl ScramCredential {
    /// The credential of `password` with `salt` and `iterations` (RFC 5802 section 3).
    pub fn new(
        mechanism: ScramMechanism,
        password: &[u8],
        salt: Vec<u8>,
        iterations: u32,
    ) -> ScramCredential {
        let salted = salted_password(mechanism, password, &salt, iterations);
        Self::from_salted_password(mechanism, &salted, salt, iterations)
    }

    /// The credential of a salted password (`Hi(password, salt, iterations)`), as
    /// AlterUserScramCredentials carries it: the client hashes, the server derives the keys
    /// (Kafka's `ScramControlManager.finishUpsertion`).
    pub fn from_salted_password(
        mechanism: ScramMechanism,
        salted: &[u8],
        salt: Vec<u8>,
        iterations: u32,
    ) -> ScramCredential {
        let client_key = hmac_sign(mechanism.hmac_algorithm(), salted, b"Client Key");
        let stored_key = digest::digest(mechanism.digest(), &client_key)
            .as_ref()
            .to_vec();
        let server_key = hmac_sign(mechanism.hmac_algorithm(), salted, b"Server Key");
        ScramCredential {
            mechanism,
            salt,
            stored_key,
            server_key,
            iterations,
        }
    }
}

/// Why an exchange failed. The message goes to the log, never to the client (which hears
/// only that authentication failed, as from Kafka).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScramError {
    /// A message that is not what RFC 5802 says it is.
    #[error("malformed SCRAM message: {0}")]
    Malformed(&'static str),
    /// Extensions (Kafka knows only `tokenauth`, for delegation tokens, not served here).
    #[error("unsupported SCRAM extensions")]
    Extensions,
    /// An authorization id that is not the user name.
    #[error("authorization id differs from the user name")]
    Authzid,
    /// No credential for the user with this mechanism.
    #[error("unknown user")]
    UnknownUser,
    /// The final message's nonce is not the one the server sent.
    #[error("nonce mismatch")]
    Nonce,
    /// The channel binding is not the client's GS2 header.
    #[error("channel binding mismatch")]
    ChannelBinding,
    /// Wrong password.
    #[error("invalid proof")]
    Proof,
}

/// An exchange after the client's first message, waiting for its final one.
#[derive(Debug)]
pub struct ScramServer {
    username: String,
    gs2_header: String,
    client_first_bare: String,
    server_first: String,
    nonce: String,
    credential: ScramCredential,
}

/// `saslname` of RFC 5802: `=2C` is `,`, `=3D` is `=`, any other `=` is an error.
fn decode_saslname(s: &str) -> Result<String, ScramError> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('=') {
        out.push_str(&rest[..i]);
        let code = rest.get(i + 1..i + 3);
        match code {
            Some("2C") => out.push(','),
            Some("3D") => out.push('='),
            _ => return Err(ScramError::Malformed("bad escape in a user name")),
        }
        rest = &rest[i + 3..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Printable ASCII but `,` (RFC 5802's `printable`, what a nonce is made of).
fn is_printable(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| (0x21..=0x7e).contains(&b) && b != b',')
}

impl ScramServer {
    /// Takes the client-first message; `credential` looks a user's credential up,
    /// `server_nonce` is fresh randomness (printable, no comma). Returns the server-first
    /// message.
    pub fn start(
        mechanism: ScramMechanism,
        client_first: &[u8],
        credential: impl FnOnce(&str) -> Option<ScramCredential>,
        server_nonce: &str,
    ) -> Result<(ScramServer, Vec<u8>), ScramError> {
        let msg =
            std::str::from_utf8(client_first).map_err(|_| ScramError::Malformed("not UTF-8"))?;
        // gs2-header: "n," or "y," (no channel binding; "p=" needs one we do not offer),
        // then an optional "a=authzid", then ",".
        let (flag, rest) = msg
            .split_once(',')
            .ok_or(ScramError::Malformed("no GS2 header"))?;
        if flag != "n" && flag != "y" {
            return Err(ScramError::Malformed("channel binding is not supported"));
        }
        let (authzid, bare) = rest
            .split_once(',')
            .ok_or(ScramError::Malformed("no GS2 header"))?;
        let authzid = match authzid {
            "" => None,
            a => Some(decode_saslname(
                a.strip_prefix("a=")
                    .ok_or(ScramError::Malformed("bad authzid"))?,
            )?),
        };
        let gs2_header = format!("{flag},{},", rest.split_once(',').map_or("", |p| p.0));
        let mut parts = bare.split(',');
        let user = parts
            .next()
            .and_then(|p| p.strip_prefix("n="))
            .ok_or(ScramError::Malformed("no user name"))?;
        let username = decode_saslname(user)?;
        if username.is_empty() {
            return Err(ScramError::Malformed("empty user name"));
        }
        let client_nonce = parts
            .next()
            .and_then(|p| p.strip_prefix("r="))
            .filter(|n| is_printable(n))
            .ok_or(ScramError::Malformed("no nonce"))?;
        if parts.next().is_some() {
            return Err(ScramError::Extensions);
        }
        if authzid.is_some_and(|a| a != username) {
            return Err(ScramError::Authzid);
        }
        let credential = credential(&username).ok_or(ScramError::UnknownUser)?;
        if credential.mechanism != mechanism {
            return Err(ScramError::UnknownUser);
        }
        let nonce = format!("{client_nonce}{server_nonce}");
        let server_first = format!(
            "r={nonce},s={},i={}",
            B64.encode(&credential.salt),
            credential.iterations
        );
        let out = server_first.clone().into_bytes();
        Ok((
            ScramServer {
                username,
                gs2_header,
                client_first_bare: bare.to_owned(),
                server_first,
                nonce,
                credential,
            },
            out,
        ))
    }

    /// The mechanism of the exchange.
    pub fn mechanism(&self) -> ScramMechanism {
        self.credential.mechanism
    }

    /// Takes the client-final message: the user name and the server-final message if the
    /// proof holds.
    pub fn finish(self, client_final: &[u8]) -> Result<(String, Vec<u8>), ScramError> {
        let msg =
            std::str::from_utf8(client_final).map_err(|_| ScramError::Malformed("not UTF-8"))?;
        let (without_proof, proof) = msg
            .rsplit_once(",p=")
            .ok_or(ScramError::Malformed("no proof"))?;
        let mut parts = without_proof.split(',');
        let channel = parts
            .next()
            .and_then(|p| p.strip_prefix("c="))
            .ok_or(ScramError::Malformed("no channel binding"))?;
        let nonce = parts
            .next()
            .and_then(|p| p.strip_prefix("r="))
            .ok_or(ScramError::Malformed("no nonce"))?;
        if parts.next().is_some() {
            return Err(ScramError::Extensions);
        }
        // Kafka checks that the nonce *ends with* the one it sent, not that it equals it, and
        // librdkafka before 2.1 depends on that: it sends the client nonce twice. The server
        // nonce is fresh randomness and the proof covers the message as sent, so a replay
        // still fails.
        if !nonce.ends_with(&self.nonce) {
            return Err(ScramError::Nonce);
        }
        if B64.decode(channel).ok().as_deref() != Some(self.gs2_header.as_bytes()) {
            return Err(ScramError::ChannelBinding);
        }
        let proof = B64
            .decode(proof)
            .map_err(|_| ScramError::Malformed("proof is not base64"))?;
        let mech = self.credential.mechanism;
        if proof.len() != mech.output_len() {
            return Err(ScramError::Proof);
        }
        let auth_message = format!(
            "{},{},{}",
            self.client_first_bare, self.server_first, without_proof
        );
        let signature = hmac_sign(
            mech.hmac_algorithm(),
            &self.credential.stored_key,
            auth_message.as_bytes(),
        );
        let client_key: Vec<u8> = proof.iter().zip(&signature).map(|(a, b)| a ^ b).collect();
        let stored = digest::digest(mech.digest(), &client_key);
        if !constant_time_eq(stored.as_ref(), &self.credential.stored_key) {
            return Err(ScramError::Proof);
        }
        let server_signature = hmac_sign(
            mech.hmac_algorithm(),
            &self.credential.server_key,
            auth_message.as_bytes(),
        );
        let server_final = format!("v={}", B64.encode(server_signature));
        Ok((self.username, server_final.into_bytes()))
    }
}

/// Equality that takes as long whatever the first differing byte.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The client side, written from RFC 5802 for the tests.
    pub(crate) fn client_final(
        mech: ScramMechanism,
        password: &str,
        client_first_bare: &str,
        server_first: &str,
    ) -> String {
        let nonce = server_first
            .split(',')
            .next()
            .unwrap()
            .strip_prefix("r=")
            .unwrap();
        client_final_with_nonce(mech, password, client_first_bare, server_first, nonce)
    }

    /// The same, sending `nonce` back instead of the server's.
    pub(crate) fn client_final_with_nonce(
        mech: ScramMechanism,
        password: &str,
        client_first_bare: &str,
        server_first: &str,
        nonce: &str,
    ) -> String {
        let fields: Vec<&str> = server_first.split(',').collect();
        let salt = B64.decode(fields[1].strip_prefix("s=").unwrap()).unwrap();
        let iterations: u32 = fields[2].strip_prefix("i=").unwrap().parse().unwrap();
        let c = ScramCredential::new(mech, password.as_bytes(), salt.clone(), iterations);
        let mut salted = vec![0u8; mech.output_len()];
        pbkdf2::derive(
            mech.pbkdf2(),
            std::num::NonZeroU32::new(iterations).unwrap(),
            &salt,
            password.as_bytes(),
            &mut salted,
        );
        let client_key = hmac_sign(mech.hmac_algorithm(), &salted, b"Client Key");
        let without_proof = format!("c=biws,r={nonce}");
        let auth = format!("{client_first_bare},{server_first},{without_proof}");
        let sig = hmac_sign(mech.hmac_algorithm(), &c.stored_key, auth.as_bytes());
        let proof: Vec<u8> = client_key.iter().zip(&sig).map(|(a, b)| a ^ b).collect();
        format!("{without_proof},p={}", B64.encode(proof))
    }

    #[test]
    fn rfc_7677_example_exchange_verifies() {
        // RFC 7677 section 3: user "user", password "pencil", SCRAM-SHA-256.
        let mech = ScramMechanism::Sha256;
        let salt = B64.decode("W22ZaJ0SNY7soEsUEjb6gQ==").unwrap();
        let cred = ScramCredential::new(mech, b"pencil", salt, 4096);
        let (server, first) = ScramServer::start(
            mech,
            b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO",
            |u| (u == "user").then(|| cred.clone()),
            "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0",
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(first).unwrap(),
            "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
        );
        let (user, last) = server
            .finish(b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=")
            .unwrap();
        assert_eq!(user, "user");
        assert_eq!(
            String::from_utf8(last).unwrap(),
            "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
        );
    }

    #[test]
    fn sha_512_round_trips_and_wrong_passwords_fail() {
        let mech = ScramMechanism::Sha512;
        let cred = ScramCredential::new(mech, b"s3cret", b"salty".to_vec(), 4096);
        for (password, ok) in [("s3cret", true), ("guess", false)] {
            let (server, first) = ScramServer::start(
                mech,
                b"n,,n=al=3Dice,r=abc",
                |u| (u == "al=ice").then(|| cred.clone()),
                "XYZ",
            )
            .unwrap();
            let first = String::from_utf8(first).unwrap();
            let last = client_final(mech, password, "n=al=3Dice,r=abc", &first);
            let got = server.finish(last.as_bytes());
            assert_eq!(got.is_ok(), ok, "{password}: {got:?}");
        }
    }

    #[test]
    fn a_final_nonce_need_only_end_with_the_servers_as_kafka_checks_it() {
        // librdkafka 2.0 repeats the client nonce in its final message.
        let mech = ScramMechanism::Sha512;
        let cred = ScramCredential::new(mech, b"pw", b"salt".to_vec(), 4096);
        let start =
            || ScramServer::start(mech, b"n,,n=u,r=cn", |_| Some(cred.clone()), "sn").unwrap();
        for (nonce, ok) in [
            ("cncnsn", true),
            ("cnsn", true),
            ("cnsX", false),
            ("sn", false),
        ] {
            let (server, first) = start();
            let first = String::from_utf8(first).unwrap();
            let last = client_final_with_nonce(mech, "pw", "n=u,r=cn", &first, nonce);
            let got = server.finish(last.as_bytes());
            assert_eq!(got.is_ok(), ok, "{nonce}: {got:?}");
        }
    }

    #[test]
    fn hostile_first_messages_are_refused() {
        let mech = ScramMechanism::Sha256;
        let cred = ScramCredential::new(mech, b"p", b"s".to_vec(), 4096);
        let start = |m: &[u8]| ScramServer::start(mech, m, |_| Some(cred.clone()), "n").map(|_| ());
        assert_eq!(
            start(b"p=tls-unique,,n=u,r=x"),
            Err(ScramError::Malformed("channel binding is not supported"))
        );
        assert_eq!(start(b"n,,n=u,r=x,ext=1"), Err(ScramError::Extensions));
        assert_eq!(start(b"n,a=other,n=u,r=x"), Err(ScramError::Authzid));
        assert!(start(b"n,a=u,n=u,r=x").is_ok());
        assert!(matches!(
            start(b"n,,n=a=zz,r=x"),
            Err(ScramError::Malformed(_))
        ));
        assert!(matches!(start(b"n,,n=u"), Err(ScramError::Malformed(_))));
        assert!(matches!(
            start(&[0xff, 0xfe]),
            Err(ScramError::Malformed(_))
        ));
        assert!(matches!(start(b""), Err(ScramError::Malformed(_))));
        let none = ScramServer::start(mech, b"n,,n=u,r=x", |_| None, "n");
        assert!(matches!(none, Err(ScramError::UnknownUser)));
    }

    #[test]
    fn debug_never_shows_keys() {
        let cred = ScramCredential::new(ScramMechanism::Sha256, b"p", b"salt".to_vec(), 4096);
        let shown = format!("{cred:?}");
        assert!(
            !shown.contains("salt") && !shown.contains("stored_key"),
            "{shown}"
        );
    }
}
