//! Who a connection is: Kafka's `KafkaPrincipal` (`User:<name>`), from a SASL username or a
//! client certificate's subject, mapped by `ssl.principal.mapping.rules`.
//!
//! ```text
//!  client certificate ─> subject DN in RFC 2253 form ("CN=app,OU=eng,O=Acme,C=US": the
//!  most specific RDN first, as Java's X500Principal.getName() writes it)
//!    ─> mapping rules (first that matches wins; none: the connection is refused)
//!    ─> User:<mapped>
//! ```

use std::fmt;

use regex::Regex;

/// An authenticated identity, always of type `User` (Kafka's only built-in type).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Principal {
    name: String,
}

impl Principal {
    /// `User:ANONYMOUS`: PLAINTEXT connections and SSL ones without a client certificate.
    pub fn anonymous() -> Principal {
        Principal::user("ANONYMOUS")
    }

    /// `User:<name>`.
    pub fn user(name: impl Into<String>) -> Principal {
        Principal { name: name.into() }
    }

    /// The name after `User:`.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl fmt::Display for Principal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "User:{}", self.name)
    }
}

/// Why a certificate names no principal.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PrincipalError {
    /// The certificate did not parse.
    #[error("the client certificate does not parse: {0}")]
    BadCertificate(String),
    /// No mapping rule matched the subject.
    #[error("no --ssl-principal-mapping-rules rule matches {0:?}")]
    NoMatchingRule(String),
}

/// The subject of a DER certificate as RFC 2253 writes it.
pub fn subject_dn(der: &[u8]) -> Result<String, PrincipalError> {
    let (_, cert) = x509_parser::parse_x509_certificate(der)
        .map_err(|e| PrincipalError::BadCertificate(e.to_string()))?;
    let mut rdns = Vec::new();
    for rdn in cert.subject().iter_rdn() {
        let mut avas = Vec::new();
        for ava in rdn.iter() {
            let oid = ava.attr_type().to_id_string();
            let value = match (keyword(&oid), ava.as_str()) {
                (Some(k), Ok(v)) => format!("{k}={}", escape(v)),
                (k, _) => {
                    // An unknown type or a value of another string type: the dotted type and
                    // the value's DER encoding in hex, as RFC 2253 section 2.4 says.
                    let v = ava.attr_value();
                    let mut der = vec![v.tag().0 as u8];
                    der.extend(der_length(v.data.len()));
                    der.extend_from_slice(v.data);
                    let hex: String = der.iter().map(|b| format!("{b:02x}")).collect();
                    format!("{}=#{hex}", k.unwrap_or(&oid))
                }
            };
            avas.push(value);
        }
        rdns.push(avas.join("+"));
    }
    rdns.reverse();
    Ok(rdns.join(","))
}

/// The attribute keywords RFC 2253 (and Java) write by name.
fn keyword(oid: &str) -> Option<&'static str> {
    Some(match oid {
        "2.5.4.3" => "CN",
        "2.5.4.6" => "C",
        "2.5.4.7" => "L",
        "2.5.4.8" => "ST",
        "2.5.4.10" => "O",
        "2.5.4.11" => "OU",
        "2.5.4.9" => "STREET",
        "0.9.2342.19200300.100.1.25" => "DC",
        "0.9.2342.19200300.100.1.1" => "UID",
        _ => return None,
    })
}

fn der_length(n: usize) -> Vec<u8> {
    if n < 0x80 {
        return vec![n as u8];
    }
    let bytes: Vec<u8> = n
        .to_be_bytes()
        .into_iter()
        .skip_while(|b| *b == 0)
        .collect();
    let mut out = vec![0x80 | bytes.len() as u8];
    out.extend(bytes);
    out
}

/// RFC 2253 section 2.4: `,+"\<>;` escaped, and a leading `#` or space and a trailing space.
fn escape(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    let last = v.chars().count().saturating_sub(1);
    for (i, c) in v.chars().enumerate() {
        let special = matches!(c, ',' | '+' | '"' | '\\' | '<' | '>' | ';')
            || (i == 0 && (c == '#' || c == ' '))
            || (i == last && c == ' ');
        if special {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Kafka's `ssl.principal.mapping.rules`: `RULE:pattern/replacement/[LU]` and `DEFAULT`,
/// separated by commas or newlines, tried in order.
#[derive(Debug, Clone)]
pub struct MappingRules(Vec<MappingRule>);

#[derive(Debug, Clone)]
enum MappingRule {
    /// The DN as it is.
    Default,
    Rule {
        /// The pattern anchored at both ends: Java's `Matcher.matches`.
        whole: Regex,
        /// The pattern as written, for the replacement (Java's `String.replaceAll`).
        pattern: Regex,
        /// In the `regex` crate's syntax (`${1}`).
        replacement: String,
        case: Case,
    },
}

#[derive(Debug, Clone, Copy)]
enum Case {
    Keep,
    Lower,
    Upper,
}

/// Why a rule list does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct RulesError(String);

impl Default for MappingRules {
    /// Kafka's default: `DEFAULT` (the DN is the name).
    fn default() -> Self {
        MappingRules(vec![MappingRule::Default])
    }
}

impl MappingRules {
    /// Parses Kafka's syntax.
    pub fn parse(s: &str) -> Result<MappingRules, RulesError> {
        let mut rules = Vec::new();
        let mut rest = s.trim_start();
        while !rest.is_empty() {
            if let Some(after) = rest.strip_prefix("DEFAULT") {
                rules.push(MappingRule::Default);
                rest = after;
            } else if let Some(after) = rest.strip_prefix("RULE:") {
                let (pattern, after) = until_slash(after)
                    .ok_or_else(|| RulesError(format!("unterminated pattern in {s:?}")))?;
                let (replacement, after) = until_slash(after)
                    .ok_or_else(|| RulesError(format!("unterminated replacement in {s:?}")))?;
                let (case, after) = match after.chars().next() {
                    Some('L') => (Case::Lower, &after[1..]),
                    Some('U') => (Case::Upper, &after[1..]),
                    _ => (Case::Keep, after),
                };
                let bad = |e: regex::Error| RulesError(format!("pattern {pattern:?}: {e}"));
                rules.push(MappingRule::Rule {
                    whole: Regex::new(&format!("^(?:{pattern})$")).map_err(bad)?,
                    pattern: Regex::new(&pattern).map_err(bad)?,
                    replacement: java_replacement(&replacement),
                    case,
                });
                rest = after;
            } else {
                return Err(RulesError(format!(
                    "{rest:?} is neither DEFAULT nor RULE:pattern/replacement/[LU]"
                )));
            }
            rest = rest.trim_start_matches([' ', '\t']);
            match rest.chars().next() {
                None => {}
                Some(',' | '\n') => rest = rest[1..].trim_start(),
                Some(_) => return Err(RulesError(format!("expected a comma before {rest:?}"))),
            }
        }
        if rules.is_empty() {
            return Err(RulesError("no rule".into()));
        }
        Ok(MappingRules(rules))
    }

    /// The principal name for `dn`: the first rule that matches.
    pub fn apply(&self, dn: &str) -> Result<String, PrincipalError> {
        for rule in &self.0 {
            match rule {
                MappingRule::Default => return Ok(dn.to_owned()),
                MappingRule::Rule {
                    whole,
                    pattern,
                    replacement,
                    case,
                } if whole.is_match(dn) => {
                    let out = pattern.replace_all(dn, replacement.as_str()).into_owned();
                    return Ok(match case {
                        Case::Keep => out,
                        Case::Lower => out.to_lowercase(),
                        Case::Upper => out.to_uppercase(),
                    });
                }
                MappingRule::Rule { .. } => {}
            }
        }
        Err(PrincipalError::NoMatchingRule(dn.to_owned()))
    }
}

/// Text up to the next unescaped `/` (escapes kept: they mean the same to the regex), and
/// what follows it.
fn until_slash(s: &str) -> Option<(String, &str)> {
    let mut out = String::new();
    let mut chars = s.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => {
                let (_, next) = chars.next()?;
                if next != '/' {
                    out.push('\\');
                }
                out.push(next);
            }
            '/' => return Some((out, &s[i + 1..])),
            c => out.push(c),
        }
    }
    None
}

/// Java's replacement syntax (`$1`, `\$` for a dollar) in the `regex` crate's (`${1}`, `$$`).
fn java_replacement(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('$') => out.push_str("$$"),
                Some(other) => out.push(other),
                None => {}
            },
            '$' => {
                let mut digits = String::new();
                while let Some(d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                    digits.push(*d);
                    chars.next();
                }
                if digits.is_empty() {
                    out.push_str("$$");
                } else {
                    out.push_str(&format!("${{{digits}}}"));
                }
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_map_as_kafkas_documentation_shows() {
        let rules = MappingRules::parse(
            "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L,\n RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/U, DEFAULT",
        )
        .unwrap();
        assert_eq!(
            rules.apply("CN=kafka-app,OU=ServiceUsers,O=Acme").unwrap(),
            "kafka-app"
        );
        assert_eq!(
            rules
                .apply("CN=adminUser,OU=Admin,O=Unknown,L=Unknown,ST=Unknown,C=Unknown")
                .unwrap(),
            "adminuser@admin"
        );
        assert_eq!(
            rules.apply("OU=x,cn=quickstart.confluent.io,O=y").unwrap(),
            "QUICKSTART.CONFLUENT.IO"
        );
        assert_eq!(rules.apply("O=only").unwrap(), "O=only");
        let strict = MappingRules::parse("RULE:^CN=(.*)$/$1/").unwrap();
        assert!(matches!(
            strict.apply("O=x"),
            Err(PrincipalError::NoMatchingRule(_))
        ));
        assert_eq!(MappingRules::default().apply("CN=a").unwrap(), "CN=a");
        for bad in [
            "RULE:^CN=(.*$/x",
            "RULE:^CN=(.*)$/$1",
            "NOPE",
            "RULE:a/b/ DEFAULT",
            "",
        ] {
            assert!(MappingRules::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn values_are_escaped_as_rfc_2253_says() {
        assert_eq!(escape("a,b+c"), "a\\,b\\+c");
        assert_eq!(escape("#x "), "\\#x\\ ");
        assert_eq!(escape("plain"), "plain");
        assert_eq!(der_length(5), vec![5]);
        assert_eq!(der_length(300), vec![0x82, 1, 44]);
    }
}
