//! One peer connection as both ends use it after the handshake: frames in the clear on an open
//! port, sealed frames (`frame::Seal`) on a port with a cluster secret.

use serde::de::DeserializeOwned;
use serde::Serialize;
use tokio::net::TcpStream;

use crate::network::frame::{read_frame, read_sealed, write_frame, write_sealed, FrameError, Seal};

#[derive(Debug)]
pub(crate) struct Channel {
    stream: TcpStream,
    /// `None` on an open port.
    seal: Option<Seal>,
}

impl Channel {
    pub fn new(stream: TcpStream, seal: Option<Seal>) -> Channel {
        Channel { stream, seal }
    }

    pub async fn send<T: Serialize>(&mut self, message: &T) -> Result<(), FrameError> {
        match &mut self.seal {
            Some(seal) => write_sealed(&mut self.stream, seal, message).await,
            None => write_frame(&mut self.stream, message).await,
        }
    }

    pub async fn receive<T: DeserializeOwned>(&mut self) -> Result<T, FrameError> {
        match &mut self.seal {
            Some(seal) => read_sealed(&mut self.stream, seal).await,
            None => read_frame(&mut self.stream).await,
        }
    }

    /// Ready once the peer sent something (or closed): the idle wait reads no bytes.
    pub async fn readable(&self) -> std::io::Result<()> {
        self.stream.readable().await
    }
}
