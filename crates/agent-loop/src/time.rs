//! UTC timestamps as text (RFC 3339 and the compact stamp in session ids), computed
//! from the Unix clock with the civil-from-days algorithm so no date crate is needed.

use std::time::{SystemTime, UNIX_EPOCH};

/// The broken-down UTC time of `at` (times before 1970 clamp to the epoch).
fn civil(at: SystemTime) -> (i64, u32, u32, u32, u32, u32) {
    let secs = at
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rem = secs % 86_400;
    // Howard Hinnant's days-to-civil, shifted so the era starts on 0000-03-01.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (
        year,
        month as u32,
        day as u32,
        (rem / 3_600) as u32,
        (rem % 3_600 / 60) as u32,
        (rem % 60) as u32,
    )
}

/// `2025-01-31T12:00:05Z`.
pub fn rfc3339(at: SystemTime) -> String {
    let (y, mo, d, h, mi, s) = civil(at);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z")
}

pub fn now_rfc3339() -> String {
    rfc3339(SystemTime::now())
}

/// `20250131-120005`: the sortable head of a session id.
pub fn compact(at: SystemTime) -> String {
    let (y, mo, d, h, mi, s) = civil(at);
    format!("{y:04}{mo:02}{d:02}-{h:02}{mi:02}{s:02}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn at(secs: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(secs)
    }

    #[test]
    fn known_instants_format_as_rfc3339() {
        assert_eq!(rfc3339(at(0)), "1970-01-01T00:00:00Z");
        // 2000-02-29 (a leap day in a century leap year) 23:59:59.
        assert_eq!(rfc3339(at(951_868_799)), "2000-02-29T23:59:59Z");
        assert_eq!(rfc3339(at(1_735_689_600)), "2025-01-01T00:00:00Z");
        assert_eq!(compact(at(1_738_324_805)), "20250131-120005");
    }
}
