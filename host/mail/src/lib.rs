//! Sending the console's e-mail through the operator's `[console]
//! mail_command`: a program run without a shell, the message (headers, a
//! blank line, plain text) on its standard input, the recipient appended as
//! its last argument and set in `MEDIAPARSE_MAIL_TO`. The service holds no
//! SMTP client; operators wire the command to sendmail, msmtp or anything.
//!
//! A few commands run at once across the process: a sign-up flood finds the
//! slots taken and its mail is dropped (and logged), never queued without
//! bound. A command that hangs is killed after [`TIMEOUT`]. Its output is
//! discarded, never logged: it may echo the message, which carries a secret.

use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::sync::{Semaphore, SemaphorePermit};

/// Mail commands running at once, process-wide.
pub const IN_FLIGHT: usize = 4;
/// How long one mail command may take before it is killed.
pub const TIMEOUT: Duration = Duration::from_secs(30);

static SLOTS: Semaphore = Semaphore::const_new(IN_FLIGHT);

/// One plain-text message.
#[derive(Clone, Debug)]
pub struct Message {
    pub to: String,
    pub subject: String,
    pub text: String,
}

impl Message {
    /// The message as the command reads it: headers, a blank line, the text.
    fn render(&self) -> String {
        format!(
            "To: {}\nSubject: {}\nMIME-Version: 1.0\nContent-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: 8bit\n\n{}",
            self.to, self.subject, self.text
        )
    }
}

/// Why a message was not sent. Never carries the message or the recipient.
#[derive(Debug, thiserror::Error)]
pub enum MailError {
    #[error("{IN_FLIGHT} mail commands are running already")]
    Busy,
    #[error("the recipient cannot be handed to a command")]
    Recipient,
    #[error("the subject holds a control character")]
    Subject,
    #[error("the mail command is empty")]
    NoProgram,
    #[error("starting the mail command: {0}")]
    Spawn(std::io::ErrorKind),
    #[error("writing the message to the mail command: {0}")]
    Write(std::io::ErrorKind),
    #[error("the mail command did not finish within {0:?} and was killed")]
    Timeout(Duration),
    #[error("the mail command exited with {0}")]
    Failed(ExitStatus),
}

/// A slot for one mail command, taken at once or refused ([`MailError::Busy`]).
pub fn reserve() -> Result<SemaphorePermit<'static>, MailError> {
    SLOTS.try_acquire().map_err(|_| MailError::Busy)
}

/// A recipient safe as an argument and a header: an address, no option
/// (leading `-`), no whitespace or control characters.
fn recipient_ok(to: &str) -> bool {
    !to.is_empty()
        && to.len() <= 254
        && !to.starts_with('-')
        && to.contains('@')
        && !to.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// Run `argv` with `message` on its standard input, holding `slot`.
pub async fn send(
    argv: &[String],
    message: &Message,
    slot: SemaphorePermit<'static>,
) -> Result<(), MailError> {
    let _slot = slot;
    if !recipient_ok(&message.to) {
        return Err(MailError::Recipient);
    }
    if message.subject.chars().any(char::is_control) {
        return Err(MailError::Subject);
    }
    let (program, args) = argv.split_first().ok_or(MailError::NoProgram)?;
    let mut child = tokio::process::Command::new(program)
        .args(args)
        .arg(&message.to)
        .env("MEDIAPARSE_MAIL_TO", &message.to)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| MailError::Spawn(e.kind()))?;
    let text = message.render();
    let mut stdin = child.stdin.take();
    let run = async {
        let written = match stdin.as_mut() {
            Some(stdin) => stdin.write_all(text.as_bytes()).await,
            None => Ok(()),
        };
        // End of input: sendmail and friends read until it.
        drop(stdin.take());
        let status = child.wait().await.map_err(|e| MailError::Spawn(e.kind()))?;
        // A command that failed before reading says more by its status
        // than by the broken pipe.
        match written {
            _ if !status.success() => Err(MailError::Failed(status)),
            Err(e) => Err(MailError::Write(e.kind())),
            Ok(()) => Ok(()),
        }
    };
    match tokio::time::timeout(TIMEOUT, run).await {
        Ok(result) => result,
        // Dropping the child kills it (kill_on_drop).
        Err(_) => Err(MailError::Timeout(TIMEOUT)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recipients_that_could_be_options_or_headers_are_refused() {
        assert!(recipient_ok("ann@example.com"));
        assert!(!recipient_ok("-oQ/tmp@example.com"));
        assert!(!recipient_ok("ann@example.com\nBcc: eve@example.com"));
        assert!(!recipient_ok("ann example@example.com"));
        assert!(!recipient_ok("no-at-sign"));
    }

    #[tokio::test]
    async fn the_command_reads_the_message_and_gets_the_recipient_as_its_last_argument() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let argv = vec![
            "/bin/sh".to_string(),
            "-c".to_string(),
            format!(
                "{{ printf 'arg=%s env=%s\\n' \"$1\" \"$MEDIAPARSE_MAIL_TO\"; cat; }} > '{}'",
                out.display()
            ),
            "mail".to_string(),
        ];
        let message = Message {
            to: "ann@example.com".into(),
            subject: "Hello there".into(),
            text: "line one\n$(touch /tmp/never)\n".into(),
        };
        send(&argv, &message, reserve().unwrap()).await.unwrap();
        let got = std::fs::read_to_string(&out).unwrap();
        assert!(
            got.starts_with("arg=ann@example.com env=ann@example.com\nTo: ann@example.com\n"),
            "{got}"
        );
        assert!(got.contains("Subject: Hello there\n"), "{got}");
        assert!(
            got.ends_with("\n\nline one\n$(touch /tmp/never)\n"),
            "{got}"
        );

        let failing = vec!["/bin/false".to_string()];
        let err = send(&failing, &message, reserve().unwrap())
            .await
            .unwrap_err();
        assert!(matches!(err, MailError::Failed(_)), "{err}");
        let missing = vec!["/nonexistent/sendmail".to_string()];
        let err = send(&missing, &message, reserve().unwrap())
            .await
            .unwrap_err();
        assert!(matches!(err, MailError::Spawn(_)), "{err}");
    }
}
