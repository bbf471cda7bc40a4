//! Unit tests of the records and reports every system shares: tables, CSV and JSON, the
//! digits a figure prints to, live reports.

use super::*;
use serde_json::json;

#[test]
fn tables_csv_and_json() {
    let mut r = Report::new("demo");
    r.push(Record::new("speed", &[("size", json!(64))], "rate", "MB/s", 9.3).published(9.32, "spec"));
    r.push(Record::new(
        "speed",
        &[("size", json!(1024)), ("mode", json!("both"))],
        "rate",
        "MB/s",
        9.5,
    ));
    let t = r.table();
    assert!(t.contains("== speed") && t.contains("-0.2%"), "{t}");
    let c = &r.csvs()[0];
    assert_eq!(c.file, "speed.csv");
    assert!(
        c.text
            .starts_with("size,mode,metric,unit,simulated,published,source\n"),
        "{}",
        c.text
    );
    let j: serde_json::Value = serde_json::from_str(&r.json()).unwrap();
    assert_eq!(j["system"], "demo");
    assert_eq!(j["records"][0]["published"], 9.32);
    assert!(j["records"][1]["published"].is_null());
}

/// Issue 31: counts print whole, flags as yes/no, the rest to four significant
/// digits; CSVs carry six.
#[test]
fn r31_figures_print_to_their_meaningful_digits() {
    assert_eq!(fmt_num(8442.0), "8442");
    assert_eq!(fmt_num(10.0), "10");
    assert_eq!(fmt_num(21.052631), "21.05");
    assert_eq!(fmt_num(171.42), "171.4");
    assert_eq!(fmt_num(8.8106e-4), "0.0008811");
    assert_eq!(fmt_num(0.5), "0.5000");
    assert_eq!(fmt_num(3.5041e-30), "3.504e-30");
    assert_eq!(fmt_value(1.0, YES_NO), "yes");
    assert_eq!(fmt_value(0.0, YES_NO), "no");
    assert_eq!(csv_num(0.04965999999999999), "0.04966");
    assert_eq!(csv_num(8442.0), "8442");
    assert_eq!(csv_num(3.504123456e-30), "3.50412e-30");
    assert_eq!(csv_num(f64::NAN), "");
    let mut r = Report::new("demo");
    r.push(Record::new("map", &[("n", json!(1))], "correct", YES_NO, 1.0).published(1.0, "spec"));
    r.push(Record::new("map", &[("n", json!(2))], "share", "", 0.1234567));
    let t = r.table();
    assert!(!t.contains("[]") && !t.contains("[yes/no]"), "{t}");
    let row = t.lines().find(|l| l.contains("correct")).unwrap();
    assert!(row.contains(" yes ") && row.ends_with("same"), "{row}");
    assert!(r.csvs()[0].text.contains(",0.123457,"), "{}", r.csvs()[0].text);
}

/// Issue 31: a figure with a confidence interval prints to the digits the interval
/// makes meaningful, the interval beside it; CSVs keep one digit more, and the JSON
/// carries the interval.
#[test]
fn r31_figures_print_to_the_digits_their_interval_allows() {
    assert_eq!(ci_decimals(0.83), 1);
    assert_eq!(ci_decimals(0.14), 2);
    assert_eq!(ci_decimals(2.9), 1);
    assert_eq!(ci_decimals(3.0), 0);
    assert_eq!(ci_decimals(56.0), -1);
    assert_eq!(ci_decimals(240.0), -1);
    assert_eq!(ci_decimals(0.0021), 4);
    assert_eq!(fmt_ci(102.2049, 0.83), ("102.2".into(), "0.8".into()));
    assert_eq!(fmt_ci(1234.5, 56.0), ("1230".into(), "60".into()));
    assert_eq!(fmt_ci(2234.5, 240.0), ("2230".into(), "240".into()));
    assert_eq!(fmt_ci(0.014237, 0.0021), ("0.0142".into(), "0.0021".into()));
    assert_eq!(fmt_ci(-3.0, 40.0), ("0".into(), "40".into()));
    // The interval is never wider than the rounding hides: the printed figure is within
    // half a unit of its last place of the true one.
    for (x, c) in [
        (102.2049, 0.83),
        (1234.5, 56.0),
        (0.014237, 0.0021),
        (7.77777, 0.35),
    ] {
        let (v, _) = fmt_ci(x, c);
        let d = ci_decimals(c);
        let v: f64 = v.parse().unwrap();
        assert!((v - x).abs() <= 0.5 * 10f64.powi(-d) + 1e-12, "{x} ± {c}: {v}");
    }
    let mut r = Report::new("demo");
    r.push(
        Record::new("sat", &[("n", json!(64))], "rate", "MB/s", 414.2371)
            .ci95(Some(21.7))
            .published(420.0, "spec"),
    );
    r.push(Record::new("sat", &[("n", json!(128))], "links", "count", 96.0));
    r.push(Record::new("other", &[], "rate", "MB/s", 1.23456).ci95(Some(0.0)));
    let t = r.table();
    let head = t.lines().find(|l| l.starts_with("case")).unwrap();
    assert!(head.contains("±95%"), "{t}");
    let row = t.lines().find(|l| l.contains("n=64")).unwrap();
    let w: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(&w[3..6], ["414", "22", "420"], "{row}");
    // An interval of nothing is no interval: no column for that experiment.
    let other = t.split("== other").nth(1).unwrap();
    assert!(!other.contains("±95%") && other.contains("1.235"), "{t}");
    let csv = &r.csvs()[0].text;
    assert!(
        csv.starts_with("n,metric,unit,simulated,ci95,published,source\n"),
        "{csv}"
    );
    assert!(csv.contains("64,rate,MB/s,414.2,21.7,420,spec"), "{csv}");
    assert!(csv.contains("128,links,count,96,,,"), "{csv}");
    let j: serde_json::Value = serde_json::from_str(&r.json()).unwrap();
    assert_eq!(j["records"][0]["ci95"], 21.7);
    assert!(j["records"][1].get("ci95").is_none());
}

/// A live run's report names its values `measured` and compares by ratio.
#[test]
fn a_live_report_says_measured() {
    let mut r = Report::live("demo-live");
    r.push(Record::new("rtt", &[("system", json!("q"))], "rtt_us", "us", 15.8).published(7.9, "2001"));
    let t = r.table();
    assert!(
        t.contains("measured") && t.contains("2.00x") && !t.contains("simulated"),
        "{t}"
    );
    assert!(
        r.csvs()[0]
            .text
            .starts_with("system,metric,unit,measured,published_2001,source\n")
    );
    let text = r.json();
    assert!(text.find("\"system\"") < text.find("\"records\""), "{text}");
    let j: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(j["system"], "demo-live");
    assert_eq!(j["records"][0]["measured"], 15.8);
    assert!(j["records"][0].get("simulated").is_none());
}
