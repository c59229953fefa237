//! `sasl.jaas.config` as Kafka's `JaasConfig` reads it: one login module, its control flag,
//! then `name=value` options and a closing `;`.
//!
//! ```text
//!  org.apache.kafka.common.security.scram.ScramLoginModule required
//!      username="alice" password="alice-secret";
//! ```
//!
//! Values are bare words or quoted strings (`"` or `'`, backslash escapes); `//` and `/* */`
//! are comments. Errors name options and positions, never values: a value may be a password.

use super::Password;

/// Longest `sasl.jaas.config` read.
const JAAS_BYTES_MAX: usize = 64 * 1024;
/// Most options one login module may carry.
const OPTIONS_MAX: usize = 64;

/// The login modules whose username and password this client uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoginModule {
    /// `org.apache.kafka.common.security.plain.PlainLoginModule`.
    Plain,
    /// `org.apache.kafka.common.security.scram.ScramLoginModule`.
    Scram,
}

const PLAIN_MODULE: &str = "org.apache.kafka.common.security.plain.PlainLoginModule";
const SCRAM_MODULE: &str = "org.apache.kafka.common.security.scram.ScramLoginModule";

/// What a `sasl.jaas.config` says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JaasLogin {
    /// The module named.
    pub module: LoginModule,
    /// Its `username` option.
    pub username: String,
    /// Its `password` option.
    pub password: Password,
}

/// Why a `sasl.jaas.config` is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JaasError {
    /// Nothing but blanks and comments.
    #[error("JAAS config property does not contain any login modules")]
    Empty,
    /// Longer than [`JAAS_BYTES_MAX`].
    #[error("JAAS config property is longer than {JAAS_BYTES_MAX} bytes")]
    TooLong,
    /// Kafka's clients take exactly one module from the property.
    #[error("JAAS config property contains {0} login modules, should be 1 module")]
    ModuleCount(usize),
    /// A module whose credentials this client cannot use (Kerberos, OAuth, ...).
    #[error("login module {0} is not supported: use {PLAIN_MODULE} or {SCRAM_MODULE}")]
    UnknownModule(String),
    /// Not one of JAAS's four control flags.
    #[error(
        "Invalid control flag '{0}' in JAAS config (required, requisite, sufficient or optional)"
    )]
    ControlFlag(String),
    /// `name` without `=value`.
    #[error("Value not specified for key '{0}' in JAAS config")]
    NoValue(String),
    /// A quote that never closes.
    #[error("JAAS config: unterminated quoted value for key '{0}'")]
    Unterminated(String),
    /// A comment that never closes.
    #[error("JAAS config: unterminated comment")]
    UnterminatedComment,
    /// The module's options do not end with `;`.
    #[error("JAAS config: expected ';' at the end of the login module's options")]
    NoSemicolon,
    /// A character that starts no token, or a token where another was due.
    #[error("JAAS config: unexpected {0} at character {1}")]
    Unexpected(&'static str, usize),
    /// `username` or `password` missing.
    #[error("JAAS config: option '{0}' is required by {1}")]
    Missing(&'static str, &'static str),
    /// The same option twice.
    #[error("JAAS config: option '{0}' is given more than once")]
    Duplicate(String),
    /// More than [`OPTIONS_MAX`] options.
    #[error("JAAS config: more than {OPTIONS_MAX} options")]
    TooManyOptions,
    /// `tokenauth=true` asks for delegation tokens, which Cohort does not serve.
    #[error("JAAS config: delegation token authentication (tokenauth=true) is not supported")]
    TokenAuth,
}

#[derive(Debug, PartialEq, Eq)]
enum Token {
    Word(String),
    Quoted(String),
    Equals,
    Semicolon,
}

impl Token {
    fn kind(&self) -> &'static str {
        match self {
            Token::Word(_) => "word",
            Token::Quoted(_) => "quoted string",
            Token::Equals => "'='",
            Token::Semicolon => "';'",
        }
    }
}

/// The characters of a bare word, as Kafka's tokenizer sets them up (letters, digits and
/// `. - _ $ { }`).
fn is_word(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '.' | '-' | '_' | '$' | '{' | '}')
}

/// Splits the text into tokens with their starting character positions.
fn tokenize(text: &str) -> Result<Vec<(usize, Token)>, JaasError> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    // The key a quoted value belongs to, for the unterminated-quote error.
    let mut last_word = String::new();
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '/' && chars.get(i + 1) == Some(&'/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && chars.get(i + 1) == Some(&'*') {
            let mut j = i + 2;
            loop {
                match (chars.get(j), chars.get(j + 1)) {
                    (Some('*'), Some('/')) => break,
                    (Some(_), _) => j += 1,
                    (None, _) => return Err(JaasError::UnterminatedComment),
                }
            }
            i = j + 2;
        } else if c == '=' {
            out.push((i, Token::Equals));
            i += 1;
        } else if c == ';' {
            out.push((i, Token::Semicolon));
            i += 1;
        } else if c == '"' || c == '\'' {
            let start = i;
            let mut value = String::new();
            i += 1;
            loop {
                match chars.get(i) {
                    None => return Err(JaasError::Unterminated(last_word)),
                    Some(q) if *q == c => {
                        i += 1;
                        break;
                    }
                    Some('\\') => {
                        let escaped = chars
                            .get(i + 1)
                            .ok_or_else(|| JaasError::Unterminated(last_word.clone()))?;
                        value.push(match escaped {
                            'n' => '\n',
                            't' => '\t',
                            'r' => '\r',
                            other => *other,
                        });
                        i += 2;
                    }
                    Some(other) => {
                        value.push(*other);
                        i += 1;
                    }
                }
            }
            out.push((start, Token::Quoted(value)));
        } else if is_word(c) {
            let start = i;
            while i < chars.len() && is_word(chars[i]) {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            last_word.clone_from(&word);
            out.push((start, Token::Word(word)));
        } else {
            return Err(JaasError::Unexpected("character", i));
        }
    }
    Ok(out)
}

/// One module: class, flag, options (values kept only for the options we use).
struct Module {
    class: String,
    options: Vec<(String, String)>,
}

fn modules(tokens: Vec<(usize, Token)>) -> Result<Vec<Module>, JaasError> {
    let mut out = Vec::new();
    let mut it = tokens.into_iter().peekable();
    while let Some((at, token)) = it.next() {
        let Token::Word(class) = token else {
            return Err(JaasError::Unexpected(token.kind(), at));
        };
        match it.next() {
            Some((_, Token::Word(flag))) => {
                if !matches!(
                    flag.to_ascii_lowercase().as_str(),
                    "required" | "requisite" | "sufficient" | "optional"
                ) {
                    return Err(JaasError::ControlFlag(flag));
                }
            }
            Some((at, other)) => return Err(JaasError::Unexpected(other.kind(), at)),
            None => return Err(JaasError::NoSemicolon),
        }
        let mut options: Vec<(String, String)> = Vec::new();
        loop {
            match it.next() {
                Some((_, Token::Semicolon)) => break,
                Some((_, Token::Word(key))) => {
                    match it.next() {
                        Some((_, Token::Equals)) => {}
                        _ => return Err(JaasError::NoValue(key)),
                    }
                    let value = match it.next() {
                        Some((_, Token::Word(v) | Token::Quoted(v))) => v,
                        _ => return Err(JaasError::NoValue(key)),
                    };
                    if options.iter().any(|(k, _)| *k == key) {
                        return Err(JaasError::Duplicate(key));
                    }
                    if options.len() == OPTIONS_MAX {
                        return Err(JaasError::TooManyOptions);
                    }
                    options.push((key, value));
                }
                Some((at, other)) => return Err(JaasError::Unexpected(other.kind(), at)),
                None => return Err(JaasError::NoSemicolon),
            }
        }
        out.push(Module { class, options });
    }
    Ok(out)
}

/// Parses a `sasl.jaas.config` value.
pub fn parse(text: &str) -> Result<JaasLogin, JaasError> {
    if text.len() > JAAS_BYTES_MAX {
        return Err(JaasError::TooLong);
    }
    let mut found = modules(tokenize(text)?)?;
    let module = match found.len() {
        0 => return Err(JaasError::Empty),
        1 => found.remove(0),
        n => return Err(JaasError::ModuleCount(n)),
    };
    let (kind, class) = match module.class.as_str() {
        PLAIN_MODULE => (LoginModule::Plain, PLAIN_MODULE),
        SCRAM_MODULE => (LoginModule::Scram, SCRAM_MODULE),
        other => return Err(JaasError::UnknownModule(other.to_owned())),
    };
    let mut username = None;
    let mut password = None;
    for (key, value) in module.options {
        match key.as_str() {
            "username" => username = Some(value),
            "password" => password = Some(value),
            "tokenauth" if value.eq_ignore_ascii_case("true") => return Err(JaasError::TokenAuth),
            // Kafka's modules ignore options they do not know; so do we.
            _ => {}
        }
    }
    Ok(JaasLogin {
        module: kind,
        username: username.ok_or(JaasError::Missing("username", class))?,
        password: Password::new(password.ok_or(JaasError::Missing("password", class))?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kafkas_documented_forms_parse() {
        let login = parse(
            "org.apache.kafka.common.security.scram.ScramLoginModule required \
             username=\"alice\" password=\"alice-secret\";",
        )
        .unwrap();
        assert_eq!(login.module, LoginModule::Scram);
        assert_eq!(login.username, "alice");
        assert_eq!(login.password.expose(), "alice-secret");

        let login = parse(
            "  org.apache.kafka.common.security.plain.PlainLoginModule REQUIRED\n\
             // a comment\n username=bob /* inline */ password='p\\'w\\\\d \"x\"' extra=1;\n",
        )
        .unwrap();
        assert_eq!(login.module, LoginModule::Plain);
        assert_eq!(login.username, "bob");
        assert_eq!(login.password.expose(), "p'w\\d \"x\"");
    }

    #[test]
    fn malformed_configs_are_refused_with_clear_errors() {
        let scram = "org.apache.kafka.common.security.scram.ScramLoginModule";
        let cases: Vec<(String, JaasError)> = vec![
            ("  // nothing\n".into(), JaasError::Empty),
            (
                format!("{scram} required username=\"a\" password=\"b\""),
                JaasError::NoSemicolon,
            ),
            (
                format!("{scram} mandatory username=\"a\" password=\"b\";"),
                JaasError::ControlFlag("mandatory".into()),
            ),
            (
                format!("{scram} required username password=\"b\";"),
                JaasError::NoValue("username".into()),
            ),
            (
                format!("{scram} required username=\"a\" password=\"b;"),
                JaasError::Unterminated("password".into()),
            ),
            (
                format!("{scram} required username=\"a\";"),
                JaasError::Missing("password", SCRAM_MODULE),
            ),
            (
                format!("{scram} required password=\"a\";"),
                JaasError::Missing("username", SCRAM_MODULE),
            ),
            (
                format!("{scram} required username=a username=b password=c;"),
                JaasError::Duplicate("username".into()),
            ),
            (
                format!("{scram} required username=a password=b; {scram} required username=a password=b;"),
                JaasError::ModuleCount(2),
            ),
            (
                "com.sun.security.auth.module.Krb5LoginModule required;".into(),
                JaasError::UnknownModule("com.sun.security.auth.module.Krb5LoginModule".into()),
            ),
            (
                format!("{scram} required username=a password=b tokenauth=true;"),
                JaasError::TokenAuth,
            ),
            (
                format!("{scram} required username=a password=b /* open"),
                JaasError::UnterminatedComment,
            ),
            (
                format!("{scram} required username=a password=b@c;"),
                JaasError::Unexpected("character", scram.len() + 31),
            ),
        ];
        for (text, want) in cases {
            assert_eq!(parse(&text), Err(want), "{text}");
        }
        assert_eq!(
            parse(&"x".repeat(JAAS_BYTES_MAX + 1)),
            Err(JaasError::TooLong)
        );
    }

    #[test]
    fn errors_and_debug_never_show_the_password() {
        let scram = "org.apache.kafka.common.security.scram.ScramLoginModule";
        for text in [
            format!("{scram} required username=a password=\"hunter2;"),
            format!("{scram} required username=a password=\"hunter2\" x"),
            format!("{scram} required username=a password=hunter2 = ;"),
        ] {
            let e = parse(&text).unwrap_err().to_string();
            assert!(!e.contains("hunter2"), "{e}");
        }
        let ok = parse(&format!("{scram} required username=a password=hunter2;")).unwrap();
        assert!(!format!("{ok:?}").contains("hunter2"));
    }
}
