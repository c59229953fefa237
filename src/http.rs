//! The HTTP side door: `GET /healthz` and Prometheus `GET /metrics`.
//!
//! Two fixed routes do not need an HTTP stack: a request line is read (bounded in size and
//! time), one response is written, the connection is closed.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// Largest request head read before giving up.
const MAX_REQUEST_HEAD_BYTES: usize = 8 * 1024;
/// Time a client gets to send its request head.
const REQUEST_HEAD_TIMEOUT: Duration = Duration::from_secs(5);
/// Most HTTP requests served at once; scrapes are rare, this only bounds abuse.
const MAX_CONCURRENT_REQUESTS: usize = 64;

/// Serves until `shutdown` flips to true.
pub async fn run(listener: TcpListener, mut shutdown: watch::Receiver<bool>) {
    let permits = std::sync::Arc::new(tokio::sync::Semaphore::new(MAX_CONCURRENT_REQUESTS));
    loop {
        tokio::select! {
            _ = shutdown.changed() => return,
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let Ok(permit) = permits.clone().try_acquire_owned() else { continue };
                tokio::spawn(async move {
                    let _permit = permit;
                    if let Err(e) = serve_one(stream).await {
                        tracing::debug!(error = %e, "http request failed");
                    }
                });
            }
        }
    }
}

async fn serve_one(mut stream: TcpStream) -> std::io::Result<()> {
    let head = tokio::time::timeout(REQUEST_HEAD_TIMEOUT, read_head(&mut stream))
        .await
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::TimedOut, "request head"))??;
    let line = head.lines().next().unwrap_or("");
    let mut parts = line.split_whitespace();
    let (method, path) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let path = path.split('?').next().unwrap_or("");
    let (status, content_type, body) = match (method, path) {
        ("GET", "/healthz") => ("200 OK", "text/plain; charset=utf-8", "ok\n".to_string()),
        ("GET", "/metrics") => {
            let handle = crate::metrics::prometheus();
            handle.run_upkeep();
            (
                "200 OK",
                "text/plain; version=0.0.4; charset=utf-8",
                handle.render(),
            )
        }
        ("GET", _) => (
            "404 Not Found",
            "text/plain; charset=utf-8",
            "not found\n".into(),
        ),
        _ => (
            "405 Method Not Allowed",
            "text/plain; charset=utf-8",
            "only GET\n".into(),
        ),
    };
    let response = format!(
        "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\n\
         connection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(response.as_bytes()).await?;
    stream.shutdown().await
}

async fn read_head(stream: &mut TcpStream) -> std::io::Result<String> {
    let mut head = Vec::with_capacity(512);
    let mut chunk = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        if head.len() >= MAX_REQUEST_HEAD_BYTES {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "request head too large",
            ));
        }
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&chunk[..n]);
    }
    Ok(String::from_utf8_lossy(&head).into_owned())
}
