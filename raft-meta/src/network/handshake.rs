//! Peer authentication by the cluster secret: a mutual HMAC-SHA256 challenge–response over
//! fresh nonces from both sides, then per-direction session keys that seal every frame
//! (`frame::Seal`). The secret itself never crosses the wire (decision 0155).
//!
//! ```text
//!  client                                            server (node S)
//!    Hello { protocol, client nonce, target }  ──►   target is S or "any"?
//!                                              ◄──   Challenge { server nonce, S,
//!    S is the target I dialled?                            server proof }
//!    server proof = HMAC(K, "server" ‖ transcript)?
//!    Proof { client proof }                    ──►   client proof = HMAC(K, "client" ‖ transcript)?
//!    ════ frames sealed with HMAC(K, "c2s"/"s2c" ‖ transcript), counted per direction ════
//!
//!  transcript = client nonce ‖ server nonce ‖ target ‖ S
//! ```
//!
//! Why the node ids: without them an on-path attacker could hand a node's connection meant for
//! peer B to peer C (or back to the node itself) and have C's vote counted as B's; with the
//! target and the answering node's id under both proofs, a node only ever talks to the node it
//! meant to. Every message has a fixed size, read against it before anything is allocated.

use ring::hmac;
use ring::rand::{SecureRandom, SystemRandom};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::network::frame::Seal;
use crate::network::secret::ClusterSecret;
use crate::types::NodeId;

/// Frame kinds of the handshake, in the version byte's place: a node without a secret reads a
/// hello as a frame of an unknown version and closes (and says why, `server`).
pub(crate) const HELLO: u8 = 0x10;
const CHALLENGE: u8 = 0x11;
const PROOF: u8 = 0x12;
/// The handshake's own version, inside the hello.
const PROTOCOL: u8 = 1;
const NONCE_BYTES: usize = 32;
const TAG_BYTES: usize = 32;
/// `target` in a hello that names no node: the CLI asks whichever node answers.
const ANY_NODE: u64 = u64::MAX;

const HELLO_BYTES: usize = 1 + 1 + NONCE_BYTES + 8;
const CHALLENGE_BYTES: usize = 1 + NONCE_BYTES + 8 + TAG_BYTES;
const PROOF_BYTES: usize = 1 + TAG_BYTES;

const SERVER_PROOF: &[u8] = b"cohort peer v1 server proof";
const CLIENT_PROOF: &[u8] = b"cohort peer v1 client proof";
const CLIENT_TO_SERVER: &[u8] = b"cohort peer v1 client to server";
const SERVER_TO_CLIENT: &[u8] = b"cohort peer v1 server to client";

/// Why a handshake failed; each closes the connection.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    #[error("connection io during authentication: {0}")]
    Io(#[from] std::io::Error),
    #[error("peer closed the connection during authentication (does it run with the same --cluster-secret-file?)")]
    Closed,
    #[error("expected {expected}, got a frame announcing {len} bytes (a peer without --cluster-secret-file?)")]
    Length { expected: &'static str, len: usize },
    #[error("expected {expected}, got a frame of {len} bytes kind {kind:#04x} (a peer without --cluster-secret-file?)")]
    Unexpected {
        expected: &'static str,
        len: usize,
        kind: u8,
    },
    #[error("authentication protocol {0} is not {PROTOCOL}")]
    Protocol(u8),
    #[error("the peer does not prove the cluster secret (a different --cluster-secret-file)")]
    WrongSecret,
    #[error("the connection was meant for node {target}, this is node {node}")]
    WrongNode { target: NodeId, node: NodeId },
    #[error("dialled node {target}, reached node {reached}")]
    Misrouted { target: NodeId, reached: NodeId },
    #[error("no randomness for a nonce")]
    Random,
}

/// The handshake's inputs both sides agree on.
struct Transcript {
    client_nonce: [u8; NONCE_BYTES],
    server_nonce: [u8; NONCE_BYTES],
    target: u64,
    server: u64,
}

impl Transcript {
    fn mac(&self, key: &hmac::Key, label: &[u8]) -> hmac::Tag {
        let mut ctx = hmac::Context::with_key(key);
        ctx.update(label);
        ctx.update(&self.client_nonce);
        ctx.update(&self.server_nonce);
        ctx.update(&self.target.to_be_bytes());
        ctx.update(&self.server.to_be_bytes());
        ctx.sign()
    }

    fn verify(&self, key: &hmac::Key, label: &[u8], tag: &[u8]) -> Result<(), AuthError> {
        let mut data = Vec::with_capacity(label.len() + 2 * NONCE_BYTES + 16);
        data.extend_from_slice(label);
        data.extend_from_slice(&self.client_nonce);
        data.extend_from_slice(&self.server_nonce);
        data.extend_from_slice(&self.target.to_be_bytes());
        data.extend_from_slice(&self.server.to_be_bytes());
        // Constant time: ring compares the tags without an early exit.
        hmac::verify(key, &data, tag).map_err(|_| AuthError::WrongSecret)
    }

    fn seal(&self, key: &hmac::Key, send: &[u8], receive: &[u8]) -> Seal {
        let derive = |label| hmac::Key::new(hmac::HMAC_SHA256, self.mac(key, label).as_ref());
        Seal::new(derive(send), derive(receive))
    }
}

fn nonce() -> Result<[u8; NONCE_BYTES], AuthError> {
    let mut n = [0u8; NONCE_BYTES];
    SystemRandom::new()
        .fill(&mut n)
        .map_err(|_| AuthError::Random)?;
    Ok(n)
}

fn key(secret: &ClusterSecret) -> hmac::Key {
    hmac::Key::new(hmac::HMAC_SHA256, secret.bytes())
}

/// Reads one handshake message of `kind`: its length must be exactly `N`, checked before
/// anything else is read.
async fn read_message<R: AsyncRead + Unpin, const N: usize>(
    r: &mut R,
    kind: u8,
    expected: &'static str,
) -> Result<[u8; N], AuthError> {
    // The length first: a stranger's absurd prefix is refused as soon as its four bytes are
    // in, not when the handshake times out waiting for a fifth.
    let mut prefix = [0u8; 4];
    match r.read_exact(&mut prefix).await {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Err(AuthError::Closed),
        Err(e) => return Err(e.into()),
    }
    let len = u32::from_be_bytes(prefix) as usize;
    if len != N {
        return Err(AuthError::Length { expected, len });
    }
    let mut got = [0u8; 1];
    match r.read_exact(&mut got).await {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Err(AuthError::Closed),
        Err(e) => return Err(e.into()),
    }
    if got[0] != kind {
        return Err(AuthError::Unexpected {
            expected,
            len,
            kind: got[0],
        });
    }
    let mut body = [0u8; N];
    body[0] = kind;
    match r.read_exact(&mut body[1..]).await {
        Ok(_) => Ok(body),
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Err(AuthError::Closed),
        Err(e) => Err(e.into()),
    }
}

async fn write_message<W: AsyncWrite + Unpin>(w: &mut W, body: &[u8]) -> Result<(), AuthError> {
    let mut buf = Vec::with_capacity(4 + body.len());
    buf.extend_from_slice(&(body.len() as u32).to_be_bytes());
    buf.extend_from_slice(body);
    w.write_all(&buf).await?;
    w.flush().await?;
    Ok(())
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&bytes[at..at + 8]);
    u64::from_be_bytes(b)
}

/// The dialling side: proves the secret to whoever answers at `stream`, checks it is `target`
/// (any node when `None`) and knows the secret too.
pub(crate) async fn client<S: AsyncRead + AsyncWrite + Unpin>(
    stream: &mut S,
    secret: &ClusterSecret,
    target: Option<NodeId>,
) -> Result<Seal, AuthError> {
    let client_nonce = nonce()?;
    let target_id = target.unwrap_or(ANY_NODE);
    let mut hello = Vec::with_capacity(HELLO_BYTES);
    hello.push(HELLO);
    hello.push(PROTOCOL);
    hello.extend_from_slice(&client_nonce);
    hello.extend_from_slice(&target_id.to_be_bytes());
    write_message(stream, &hello).await?;

    let challenge: [u8; CHALLENGE_BYTES] =
        read_message(stream, CHALLENGE, "an authentication challenge").await?;
    let mut server_nonce = [0u8; NONCE_BYTES];
    server_nonce.copy_from_slice(&challenge[1..1 + NONCE_BYTES]);
    let server = u64_at(&challenge, 1 + NONCE_BYTES);
    let transcript = Transcript {
        client_nonce,
        server_nonce,
        target: target_id,
        server,
    };
    let key = key(secret);
    transcript.verify(&key, SERVER_PROOF, &challenge[1 + NONCE_BYTES + 8..])?;
    if let Some(target) = target {
        if server != target {
            return Err(AuthError::Misrouted {
                target,
                reached: server,
            });
        }
    }
    let mut proof = Vec::with_capacity(PROOF_BYTES);
    proof.push(PROOF);
    proof.extend_from_slice(transcript.mac(&key, CLIENT_PROOF).as_ref());
    write_message(stream, &proof).await?;
    Ok(transcript.seal(&key, CLIENT_TO_SERVER, SERVER_TO_CLIENT))
}

/// The answering side, node `node`: the peer must prove the secret, for this node or any.
pub(crate) async fn server<S: AsyncRead + AsyncWrite + Unpin>(
    stream: &mut S,
    secret: &ClusterSecret,
    node: NodeId,
) -> Result<Seal, AuthError> {
    let hello: [u8; HELLO_BYTES] = read_message(stream, HELLO, "an authentication hello").await?;
    if hello[1] != PROTOCOL {
        return Err(AuthError::Protocol(hello[1]));
    }
    let mut client_nonce = [0u8; NONCE_BYTES];
    client_nonce.copy_from_slice(&hello[2..2 + NONCE_BYTES]);
    let target = u64_at(&hello, 2 + NONCE_BYTES);
    if target != ANY_NODE && target != node {
        return Err(AuthError::WrongNode { target, node });
    }
    let transcript = Transcript {
        client_nonce,
        server_nonce: nonce()?,
        target,
        server: node,
    };
    let key = key(secret);
    let mut challenge = Vec::with_capacity(CHALLENGE_BYTES);
    challenge.push(CHALLENGE);
    challenge.extend_from_slice(&transcript.server_nonce);
    challenge.extend_from_slice(&node.to_be_bytes());
    challenge.extend_from_slice(transcript.mac(&key, SERVER_PROOF).as_ref());
    write_message(stream, &challenge).await?;

    let proof: [u8; PROOF_BYTES] = read_message(stream, PROOF, "an authentication proof").await?;
    transcript.verify(&key, CLIENT_PROOF, &proof[1..])?;
    Ok(transcript.seal(&key, SERVER_TO_CLIENT, CLIENT_TO_SERVER))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::network::frame::{read_sealed, write_sealed, FrameError};

    fn secret(s: &str) -> ClusterSecret {
        ClusterSecret::from_bytes(s.as_bytes()).unwrap()
    }

    /// Both ends of a fresh session over `c` and `s`.
    async fn session(
        c: &mut tokio::io::DuplexStream,
        s: &mut tokio::io::DuplexStream,
    ) -> (Seal, Seal) {
        let (a1, a2) = (secret(A), secret(A));
        let (sc, ss) = tokio::join!(client(c, &a1, None), server(s, &a2, 1));
        (sc.unwrap(), ss.unwrap())
    }

    const A: &str = "the first cluster secret, 32+ bytes long";
    const B: &str = "another cluster's secret, 32+ bytes long";

    #[tokio::test]
    async fn the_same_secret_authenticates_both_sides_and_seals_frames() {
        let (mut c, mut s) = tokio::io::duplex(4096);
        let (a1, a2) = (secret(A), secret(A));
        let (sc, ss) = tokio::join!(client(&mut c, &a1, Some(3)), server(&mut s, &a2, 3));
        let (mut client, mut server) = (sc.unwrap(), ss.unwrap());
        write_sealed(&mut c, &mut client, &"ping".to_owned())
            .await
            .unwrap();
        let got: String = read_sealed(&mut s, &mut server).await.unwrap();
        assert_eq!(got, "ping");
        write_sealed(&mut s, &mut server, &7u64).await.unwrap();
        let got: u64 = read_sealed(&mut c, &mut client).await.unwrap();
        assert_eq!(got, 7);
    }

    #[tokio::test]
    async fn a_wrong_secret_fails_on_both_sides() {
        let (mut c, mut s) = tokio::io::duplex(4096);
        let (b, a) = (secret(B), secret(A));
        let (client, server) = tokio::join!(
            async move {
                let r = client(&mut c, &b, None).await;
                drop(c);
                r
            },
            server(&mut s, &a, 1)
        );
        // The client sees the server's proof fail first and never sends its own.
        assert!(matches!(client, Err(AuthError::WrongSecret)), "{client:?}");
        assert!(matches!(server, Err(AuthError::Closed)), "{server:?}");
    }

    #[tokio::test]
    async fn a_node_refuses_a_connection_meant_for_another() {
        let (mut c, mut s) = tokio::io::duplex(4096);
        let (a1, a2) = (secret(A), secret(A));
        let (client, server) = tokio::join!(client(&mut c, &a1, Some(2)), async move {
            let r = server(&mut s, &a2, 1).await;
            drop(s);
            r
        });
        assert!(
            matches!(server, Err(AuthError::WrongNode { target: 2, node: 1 })),
            "{server:?}"
        );
        assert!(matches!(client, Err(AuthError::Closed)), "{client:?}");
    }

    #[tokio::test]
    async fn a_tampered_or_replayed_frame_fails_its_tag() {
        let (mut c, mut s) = tokio::io::duplex(1 << 16);
        let (mut client, mut server) = session(&mut c, &mut s).await;
        // Capture a sealed frame's bytes, flip one payload bit, deliver it.
        let (mut tap_w, mut tap_r) = tokio::io::duplex(1 << 16);
        write_sealed(&mut tap_w, &mut client, &"vote for me".to_owned())
            .await
            .unwrap();
        drop(tap_w);
        let mut bytes = Vec::new();
        tap_r.read_to_end(&mut bytes).await.unwrap();
        let mut tampered = bytes.clone();
        tampered[7] ^= 1;
        c.write_all(&tampered).await.unwrap();
        let got: Result<String, _> = read_sealed(&mut s, &mut server).await;
        assert!(matches!(got, Err(FrameError::BadTag)), "{got:?}");

        // A fresh session: the first frame is accepted, the same bytes again are not.
        let (mut c, mut s) = tokio::io::duplex(1 << 16);
        let (mut client, mut server) = session(&mut c, &mut s).await;
        let (mut tap_w, mut tap_r) = tokio::io::duplex(1 << 16);
        write_sealed(&mut tap_w, &mut client, &"once".to_owned())
            .await
            .unwrap();
        drop(tap_w);
        let mut bytes = Vec::new();
        tap_r.read_to_end(&mut bytes).await.unwrap();
        c.write_all(&bytes).await.unwrap();
        c.write_all(&bytes).await.unwrap();
        let first: String = read_sealed(&mut s, &mut server).await.unwrap();
        assert_eq!(first, "once");
        let again: Result<String, _> = read_sealed(&mut s, &mut server).await;
        assert!(matches!(again, Err(FrameError::BadTag)), "{again:?}");
    }

    #[tokio::test]
    async fn a_plain_request_instead_of_a_hello_is_refused_before_its_body_is_read() {
        let (mut c, mut s) = tokio::io::duplex(1 << 16);
        // The length alone decides: no fifth byte is needed to refuse it.
        c.write_all(&(64u32 << 20).to_be_bytes()).await.unwrap();
        let a = secret(A);
        let got = server(&mut s, &a, 1).await;
        assert!(
            matches!(
                got,
                Err(AuthError::Length {
                    len: 67_108_864,
                    ..
                })
            ),
            "{got:?}"
        );
        // The right length with another kind of message.
        let (mut c, mut s) = tokio::io::duplex(1 << 16);
        c.write_all(&(HELLO_BYTES as u32).to_be_bytes())
            .await
            .unwrap();
        c.write_all(&[1]).await.unwrap();
        let got = server(&mut s, &a, 1).await;
        assert!(
            matches!(got, Err(AuthError::Unexpected { kind: 1, .. })),
            "{got:?}"
        );
    }
}
