//! Shutdown signals for the long-running commands.

/// SIGINT and SIGTERM handlers, installed when this is made (not when first
/// awaited): a signal that arrives between start-up and the first wait must
/// still shut down cleanly instead of killing the process.
pub struct Signals {
    #[cfg(unix)]
    inner: Option<(tokio::signal::unix::Signal, tokio::signal::unix::Signal)>,
}

impl Signals {
    /// Installs the handlers; must run inside a tokio runtime.
    pub fn install() -> Signals {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            let inner = signal(SignalKind::interrupt())
                .and_then(|int| Ok((int, signal(SignalKind::terminate())?)))
                .ok();
            Signals { inner }
        }
        #[cfg(not(unix))]
        {
            Signals {}
        }
    }

    /// Waits for SIGINT (Ctrl-C) or, on Unix, SIGTERM; names the signal.
    pub async fn recv(&mut self) -> &'static str {
        #[cfg(unix)]
        if let Some((int, term)) = &mut self.inner {
            return tokio::select! {
                _ = int.recv() => "SIGINT",
                _ = term.recv() => "SIGTERM",
            };
        }
        let _ = tokio::signal::ctrl_c().await;
        "SIGINT"
    }
}
