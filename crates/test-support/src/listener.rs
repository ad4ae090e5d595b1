//! The thread both test servers run on: a current-thread runtime accepting
//! connections on 127.0.0.1 until the owner drops its stop handle.

use std::future::Future;
use std::io;
use std::net::SocketAddr;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

/// A running accept loop; dropping it stops the loop.
pub(crate) struct ServerThread {
    pub(crate) stop: Option<oneshot::Sender<()>>,
}

impl Drop for ServerThread {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// Spawns the thread; the receiver yields the bound address (or why binding failed).
pub(crate) fn spawn_server<H, F>(
    name: &str,
    port: u16,
    handle: H,
) -> (ServerThread, oneshot::Receiver<io::Result<SocketAddr>>)
where
    H: Fn(TcpStream) -> F + Send + 'static,
    F: Future<Output = ()> + Send + 'static,
{
    let (ready_tx, ready_rx) = oneshot::channel();
    let (stop_tx, stop_rx) = oneshot::channel();
    let spawned = std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(move || accept_until_stopped(port, handle, ready_tx, stop_rx));
    if let Err(err) = spawned {
        // The ready sender went down with the closure, so the caller sees
        // "thread died"; say the real cause here.
        eprintln!("{name}: cannot spawn thread: {err}");
    }
    (
        ServerThread {
            stop: Some(stop_tx),
        },
        ready_rx,
    )
}

fn accept_until_stopped<H, F>(
    port: u16,
    handle: H,
    ready: oneshot::Sender<io::Result<SocketAddr>>,
    mut stop: oneshot::Receiver<()>,
) where
    H: Fn(TcpStream) -> F,
    F: Future<Output = ()> + Send + 'static,
{
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            let _ = ready.send(Err(err));
            return;
        }
    };
    runtime.block_on(async move {
        let listener = match TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], port))).await {
            Ok(listener) => listener,
            Err(err) => {
                let _ = ready.send(Err(err));
                return;
            }
        };
        if ready.send(listener.local_addr()).is_err() {
            return;
        }
        loop {
            tokio::select! {
                _ = &mut stop => break,
                accepted = listener.accept() => {
                    if let Ok((stream, _)) = accepted {
                        tokio::spawn(handle(stream));
                    }
                }
            }
        }
    });
}
