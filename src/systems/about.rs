//! What each modelled system declares once, for every report of it: its name and title, its
//! sources, what is modelled, the tolerance its published figures are judged by, its
//! parameters with their sources, and the function that runs its reproduction. [`ALL`] is
//! the one list of them: `reef reproduce` and the HTML report know no system otherwise, so a
//! new system is a module with a [`System`] and a line here.

use super::{Options, Record, Report};

/// A modelled system, as reports present it.
pub struct System {
    /// The name on the command line and in file names (`atm`).
    pub name: &'static str,
    /// What it is, in a few words.
    pub title: &'static str,
    /// The papers and data sheets the model comes from.
    pub sources: &'static str,
    /// What is modelled, in a paragraph.
    pub modelled: &'static str,
    pub tolerance: Tolerance,
    /// Its parameters, each with its value and source.
    pub parameters: fn() -> Vec<Parameter>,
    /// Runs every experiment.
    pub reproduce: fn(&Options) -> Result<Report, String>,
    /// Rough CPU seconds of a full run here, to start the costliest first (the order of
    /// running changes no result).
    pub cost: u32,
}

/// How far a simulated figure may lie from the published one and still count as
/// reproduced.
pub struct Tolerance {
    /// Largest |simulated − published| / published [fraction].
    pub within: f64,
    /// Where it comes from: the spec's own words, or that this report declares it.
    pub source: &'static str,
    /// Experiments judged otherwise: (experiment, within, source).
    pub experiments: &'static [(&'static str, f64, &'static str)],
}

impl Tolerance {
    /// The tolerance of `experiment` and its source.
    pub fn of(&self, experiment: &str) -> (f64, &'static str) {
        self.experiments
            .iter()
            .find(|e| e.0 == experiment)
            .map_or((self.within, self.source), |e| (e.1, e.2))
    }
}

/// The tolerance a report declares where the spec states none.
pub const DECLARED: f64 = 0.05;
/// Its source.
pub const DECLARED_SRC: &str = "declared by this report: the spec states none";
/// The tolerance of a system whose spec states none: [`DECLARED`] for every figure.
pub const DECLARED_TOLERANCE: Tolerance = Tolerance {
    within: DECLARED,
    source: DECLARED_SRC,
    experiments: &[],
};

/// A parameter of a model: its name, value with unit, and where the value comes from.
#[derive(Clone, Debug, PartialEq)]
pub struct Parameter {
    pub name: &'static str,
    pub value: String,
    pub source: &'static str,
}

impl Parameter {
    pub fn new(name: &'static str, value: impl Into<String>, source: &'static str) -> Parameter {
        Parameter {
            name,
            value: value.into(),
            source,
        }
    }
}

/// How a figure compares with its published value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    /// Within the tolerance.
    Within,
    /// Outside it (or not a number).
    Missed,
    /// No published value to compare with.
    Unpublished,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Within => "within",
            Verdict::Missed => "missed",
            Verdict::Unpublished => "unpublished",
        }
    }
}

/// `r` judged by the tolerance `within`. A published 0 is met only by 0 (no relative
/// deviation exists).
pub fn verdict(r: &Record, within: f64) -> Verdict {
    match r.published {
        None => Verdict::Unpublished,
        Some(_) if !r.simulated.is_finite() => Verdict::Missed,
        Some(0.0) => {
            if r.simulated == 0.0 {
                Verdict::Within
            } else {
                Verdict::Missed
            }
        }
        // (A hair over: a deviation printed as the tolerance counts as within it.)
        Some(_) => match r.deviation() {
            Some(d) if d.abs() <= within * (1.0 + 1e-9) => Verdict::Within,
            _ => Verdict::Missed,
        },
    }
}

/// Every modelled system, in the order reports list them.
pub const ALL: &[System] = &[
    super::atm::about::SYSTEM,
    super::atomic::about::SYSTEM,
    super::atoll::about::SYSTEM,
    super::clan::about::SYSTEM,
    super::ieee1355::about::SYSTEM,
];

/// The system named `name`.
pub fn find(name: &str) -> Option<&'static System> {
    ALL.iter().find(|s| s.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn verdicts() {
        let r = |sim: f64, p: Option<f64>| {
            let x = Record::new("e", &[("k", json!(1))], "m", "u", sim);
            match p {
                Some(p) => x.published(p, "s"),
                None => x,
            }
        };
        assert_eq!(verdict(&r(1.05, Some(1.0)), 0.05), Verdict::Within);
        assert_eq!(verdict(&r(0.95, Some(1.0)), 0.05), Verdict::Within);
        assert_eq!(verdict(&r(1.06, Some(1.0)), 0.05), Verdict::Missed);
        assert_eq!(verdict(&r(f64::NAN, Some(1.0)), 0.05), Verdict::Missed);
        assert_eq!(verdict(&r(0.0, Some(0.0)), 0.05), Verdict::Within);
        assert_eq!(verdict(&r(0.1, Some(0.0)), 0.05), Verdict::Missed);
        assert_eq!(verdict(&r(7.0, None), 0.05), Verdict::Unpublished);
    }

    #[test]
    fn every_system_declares_itself() {
        let mut names: Vec<&str> = ALL.iter().map(|s| s.name).collect();
        assert_eq!(names, super::super::SYSTEMS);
        names.sort();
        names.dedup();
        assert_eq!(names.len(), ALL.len());
        for s in ALL {
            assert!(!s.title.is_empty() && !s.sources.is_empty() && !s.modelled.is_empty());
            assert!(s.tolerance.within > 0.0 && !s.tolerance.source.is_empty());
            let ps = (s.parameters)();
            assert!(ps.len() >= 5, "{}", s.name);
            for p in ps {
                assert!(!p.value.is_empty() && !p.source.is_empty(), "{}: {p:?}", s.name);
            }
        }
    }
}
