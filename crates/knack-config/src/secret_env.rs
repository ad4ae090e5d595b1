//! Which environment variables are secrets: one naming rule, used to scrub the environment of
//! every process knack starts for the model and to pick the values redacted from tool output.

use std::ffi::{OsStr, OsString};

/// Suffixes (after an `_`, or the whole name) that mark a credential.
/// `TOKEN` only as a suffix: `TOKENIZERS_PARALLELISM` is harmless; `KEY`
/// only after `_`: `KEYBOARD` and `XKB_KEYMAP` are harmless.
const SECRET_SUFFIXES: [&str; 10] = [
    "KEY",
    "APIKEY",
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "PASS",
    "CREDENTIALS",
    "CREDENTIAL",
    "PASSPHRASE",
];

/// Words that mark a credential wherever they stand in the name
/// (`SECRET_KEY_BASE`, `PGPASSWORD`). `PWD` is not one: it is the working directory.
const SECRET_WORDS: [&str; 3] = ["SECRET", "PASSWORD", "PASSWD"];

/// Whether a variable name looks like it holds a credential: `KNACK_API_KEY`,
/// any name that is or ends in `_KEY`, `_API_KEY`, `_APIKEY`, `_TOKEN`,
/// `_SECRET`, `_PASSWORD`, `_PASSWD`, `_PASS`, `_PASSPHRASE`, `_CREDENTIAL(S)`
/// (so also `_ACCESS_KEY`, `_PRIVATE_KEY`, `_AUTH_TOKEN`), or any name
/// containing `SECRET`, `PASSWORD` or `PASSWD`. Case does not matter.
pub fn is_secret_name(name: &str) -> bool {
    let upper = name.trim().to_ascii_uppercase();
    if upper.is_empty() {
        return false;
    }
    if upper == "KNACK_API_KEY" {
        return true;
    }
    if SECRET_WORDS.iter().any(|word| upper.contains(word)) {
        return true;
    }
    SECRET_SUFFIXES.iter().any(|suffix| {
        upper == *suffix
            || upper
                .strip_suffix(suffix)
                .is_some_and(|head| head.ends_with('_'))
    })
}

/// The names among `vars` that a child process must not inherit: secret by
/// [`is_secret_name`] and not listed in `passthrough` (`agent.env_passthrough`,
/// exact names). Non-UTF-8 names are judged by their lossy text.
pub fn secret_env_names<I, K, V>(vars: I, passthrough: &[String]) -> Vec<OsString>
where
    I: IntoIterator<Item = (K, V)>,
    K: AsRef<OsStr>,
    V: AsRef<OsStr>,
{
    vars.into_iter()
        .filter_map(|(name, _)| {
            let name = name.as_ref();
            let text = name.to_string_lossy();
            let passed = passthrough.iter().any(|p| p.trim() == text);
            (is_secret_name(&text) && !passed).then(|| name.to_os_string())
        })
        .collect()
}

/// The secret names of this process's environment that a child must not get.
pub fn secret_env_names_here(passthrough: &[String]) -> Vec<OsString> {
    secret_env_names(std::env::vars_os(), passthrough)
}

/// Removes every secret variable of this process's environment from what
/// `cmd` will inherit (a blocking `std` command; agent-loop has the tokio twin).
pub fn scrub_std_command(cmd: &mut std::process::Command, passthrough: &[String]) {
    for name in secret_env_names_here(passthrough) {
        cmd.env_remove(name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names_are_caught_and_harmless_ones_are_not() {
        for name in [
            "KNACK_API_KEY",
            "OPENAI_API_KEY",
            "openrouter_api_key",
            "STRIPE_APIKEY",
            "GITHUB_TOKEN",
            "MY_SERVICE_TOKEN",
            "AWS_SESSION_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_ACCESS_KEY",
            "SSH_PRIVATE_KEY",
            "CLIENT_SECRET",
            "SECRET_KEY_BASE",
            "DB_PASSWORD",
            "PGPASSWORD",
            "MYSQL_PASSWD",
            "SMTP_PASS",
            "GPG_PASSPHRASE",
            "GCP_CREDENTIALS",
            "TOKEN",
            "API_KEY",
        ] {
            assert!(is_secret_name(name), "{name} should be secret");
        }
        for name in [
            "PATH",
            "HOME",
            "KEYBOARD",
            "XKB_KEYMAP",
            "TOKENIZERS_PARALLELISM",
            "KNACK_BASE_URL",
            "KNACK_MODEL",
            "KNACK_HOME",
            "SSH_AUTH_SOCK",
            "SUDO_ASKPASS",
            "MONKEY",
            "BYPASS",
            "",
        ] {
            assert!(!is_secret_name(name), "{name} should not be secret");
        }
    }

    #[test]
    fn passthrough_keeps_exact_names() {
        let vars = [
            ("PATH", "/bin"),
            ("GITHUB_TOKEN", "t"),
            ("KNACK_API_KEY", "k"),
            ("NPM_TOKEN", "n"),
        ];
        let names = secret_env_names(vars, &["GITHUB_TOKEN".to_owned()]);
        assert_eq!(
            names,
            vec![OsString::from("KNACK_API_KEY"), "NPM_TOKEN".into()]
        );
    }

    #[test]
    fn a_scrubbed_std_command_does_not_see_secrets() {
        let mut cmd = std::process::Command::new("env");
        // The scrub works on what the child would inherit from us; check the
        // names it removes instead of mutating this process's environment.
        scrub_std_command(&mut cmd, &[]);
        let mut removed: Vec<_> = cmd
            .get_envs()
            .filter(|(_, v)| v.is_none())
            .map(|(k, _)| k.to_os_string())
            .collect();
        removed.sort();
        let mut expected = secret_env_names_here(&[]);
        expected.sort();
        assert_eq!(removed, expected);
    }
}
