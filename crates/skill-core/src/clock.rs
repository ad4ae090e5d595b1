//! UTC timestamps for history records, archive folders, session ids and the
//! prompt's session date, formatted here once so no date-time crate is needed.

use std::time::{SystemTime, UNIX_EPOCH};

/// `2025-01-31T12:00:05Z`.
pub fn rfc3339(at: SystemTime) -> String {
    let (y, mo, d, h, mi, s) = civil(at);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z")
}

/// `20250131T120005Z`: sortable and safe in a folder name.
pub fn compact(at: SystemTime) -> String {
    let (y, mo, d, h, mi, s) = civil(at);
    format!("{y:04}{mo:02}{d:02}T{h:02}{mi:02}{s:02}Z")
}

pub fn now_rfc3339() -> String {
    rfc3339(SystemTime::now())
}

/// `20250131-120005`: the sortable head of a session id.
pub fn session_stamp(at: SystemTime) -> String {
    let (y, mo, d, h, mi, s) = civil(at);
    format!("{y:04}{mo:02}{d:02}-{h:02}{mi:02}{s:02}")
}

/// `2025-01-31`: the calendar date, as the system prompt names a session's start.
pub fn utc_date(at: SystemTime) -> String {
    let (y, mo, d, ..) = civil(at);
    format!("{y:04}-{mo:02}-{d:02}")
}

/// Whole seconds since the Unix epoch (negative before it).
pub fn unix_seconds(at: SystemTime) -> i64 {
    match at.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
        Err(e) => -i64::try_from(e.duration().as_secs()).unwrap_or(i64::MAX),
    }
}

/// The instant `secs` seconds after the Unix epoch.
pub fn from_unix_seconds(secs: i64) -> SystemTime {
    let magnitude = std::time::Duration::from_secs(secs.unsigned_abs());
    if secs >= 0 {
        UNIX_EPOCH + magnitude
    } else {
        UNIX_EPOCH - magnitude
    }
}

/// Reads back what [`rfc3339`] writes (`2025-01-31T12:00:05Z`); other
/// spellings (offsets, fractions) are not ours and read as `None`.
pub fn parse_rfc3339(text: &str) -> Option<SystemTime> {
    let b = text.as_bytes();
    if b.len() != 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[19] != b'Z' {
        return None;
    }
    let num = |from: usize, to: usize| -> Option<i64> {
        let part = text.get(from..to)?;
        part.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| part.parse().ok())
            .flatten()
    };
    let (y, mo, d) = (num(0, 4)?, num(5, 7)?, num(8, 10)?);
    let (h, mi, s) = (num(11, 13)?, num(14, 16)?, num(17, 19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    let days = days_from_civil(y, mo, d);
    Some(from_unix_seconds(days * 86_400 + h * 3600 + mi * 60 + s))
}

/// (year, month, day) to days since 1970-01-01 (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil(at: SystemTime) -> (i64, u32, u32, u32, u32, u32) {
    let secs = match at.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_secs() as i64,
        Err(e) => -(e.duration().as_secs() as i64),
    };
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, mo, d) = civil_from_days(days);
    (
        y,
        mo,
        d,
        (rem / 3600) as u32,
        (rem % 3600 / 60) as u32,
        (rem % 60) as u32,
    )
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian
/// (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn formats_known_instants() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        let t = UNIX_EPOCH + Duration::from_secs(951_782_400 + 3_723);
        assert_eq!(rfc3339(t), "2000-02-29T01:02:03Z");
        let t = UNIX_EPOCH + Duration::from_secs(1_735_689_599);
        assert_eq!(rfc3339(t), "2024-12-31T23:59:59Z");
        assert_eq!(compact(t), "20241231T235959Z");
    }

    #[test]
    fn rfc3339_reads_back_what_it_writes() {
        for secs in [0i64, 951_782_400 + 3_723, 1_735_689_599, 4_102_444_800] {
            let at = from_unix_seconds(secs);
            assert_eq!(parse_rfc3339(&rfc3339(at)), Some(at), "{secs}");
            assert_eq!(unix_seconds(at), secs);
        }
        for bad in [
            "",
            "2025-01-31",
            "2025-13-01T00:00:00Z",
            "2025-01-31T12:00:05+01",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }
}
