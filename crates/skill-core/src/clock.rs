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
}
