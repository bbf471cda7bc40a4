//! Calibration of the CLAN host costs and the NICs' latency, as the spec says: the host
//! costs of the 533 MHz Alpha "are not published: calibrate them from the round-trip and
//! transaction figures", and the switch's timing follows from the 1.5 µs
//! application-to-application latency and the link rate. Nothing else is fitted.
//!
//! The figures fix these combinations, and no more:
//!
//! ```text
//! 1.5 µs    = PIO store + NICs + wire + switch + DMA write  (one 8-byte store, spinning reader)
//! 1/461,000 = S = event + copy(40) + work                    (the saturated server, per request)
//! 7.9 µs    = 2·OW + 2·(event + copy(40)) + work             (client and server both take events)
//! 16.8 µs   = 7.9 µs + interrupt + reschedule + select       (the server asleep in select)
//! ```
//!
//! where OW, a 40-byte Queue transfer from the sender's first store to the event in the
//! receiver's queue, is hardware only (bus, wire, switch, Tripwire) and is simulated once the
//! NICs' latency is known. So:
//!
//! - the NICs' pipeline latency is the 1.5 µs less the simulated path with NICs of no
//!   latency, half at each end (the engine's latency grows one for one with a channel's);
//!   the switch's own share is its wait for the header, [`P::SWITCH_ROUTING`], ASSUMED
//!   (the figures do not separate the switch from the NICs); both are latency only, delay
//!   lines that do not limit the rate ([`super::sim::spec`]);
//! - `tripwire_event` = 7.9 µs − S − 2·OW − copy(40), and `server_work` = S − event −
//!   copy(40), then corrected once on the simulated mean round trip (OW differs a little
//!   with where a message falls on the 32-byte blocks);
//! - interrupt + reschedule + select = 16.8 − 7.9 µs. The figures cannot tell the three
//!   apart and no experiment here can either (a sleeper always pays all three): they are
//!   split in equal thirds, ASSUMED.
//!
//! The PIO write rate is not among them, though the spec names it: each figure that holds
//! PIO time also fixes one of the free costs (the 1.5 µs the NICs' latency, the 7.9 µs the
//! event cost, 461,000/s the server's work), which takes up any other rate, so the figures
//! cannot fix it (a test reproduces every input with a PIO a third faster). It is a named
//! cost, [`Costs::pio_write_rate`], taken from the bus timing ([`P::pio_write_rate`]). The
//! copy rate, [`P::COPY_RATE`], is ASSUMED
//! (no documented figure was found): the calibration takes copy(40) at whatever rate it is
//! given and leaves the event cost the rest, so the inputs come out at any rate.

use super::params::{self as P, PUBLISHED};
use super::sim::{Costs, Scenario, run};
use crate::time::{SEC, Time, US};

/// The calibrated costs and how well the simulation reproduces the inputs.
#[derive(Debug, Clone, PartialEq)]
pub struct Calibration {
    pub costs: Costs,
    /// The simulated one-word latency with NICs of no latency [ps].
    pub path_without_nics: Time,
    /// The simulated 40-byte Queue transfer, first store to event [ps].
    pub one_way: Time,
    /// Server time per request the transaction figure gives [ps].
    pub server_time: Time,
    /// Simulated with the calibrated costs: the application-to-application latency [µs],
    /// the polling and sleeping round trips [µs], the 64-outstanding transaction rate
    /// [requests/s].
    pub app_to_app_us: f64,
    pub rtt_poll_us: f64,
    pub rtt_sleep_us: f64,
    pub transactions_per_s: f64,
}

/// Why the calibration failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CalibrationError {
    #[error("the published figures leave a negative {what} ({value_us:.3} us): the model cannot meet them")]
    Negative { what: &'static str, value_us: f64 },
    #[error("simulating the calibration: {0}")]
    Sim(String),
}

fn us(t: Time) -> f64 {
    t as f64 / US as f64
}

fn positive(what: &'static str, v: i128) -> Result<Time, CalibrationError> {
    if v < 0 {
        return Err(CalibrationError::Negative {
            what,
            value_us: v as f64 / US as f64,
        });
    }
    Ok(v as Time)
}

/// The mean of round trips after the first (which starts cold) [ps].
pub fn mean(xs: &[Time]) -> f64 {
    let v = if xs.len() > 1 { &xs[1..] } else { xs };
    if v.is_empty() {
        return 0.0;
    }
    v.iter().map(|&x| x as f64).sum::<f64>() / v.len() as f64
}

/// Requests per second from the completion times of a closed-loop run: the second half.
pub fn rate(completions: &[Time]) -> f64 {
    let n = completions.len();
    if n < 4 {
        return 0.0;
    }
    let (a, b) = (completions[n / 2], completions[n - 1]);
    (n - 1 - n / 2) as f64 / ((b - a) as f64 / SEC as f64)
}

/// Costs of nothing but copying at `copy_rate` and storing at `pio_write_rate` [bytes/s].
fn assumed(copy_rate: f64, pio_write_rate: f64) -> Costs {
    Costs {
        tripwire_event: 0,
        server_work: 0,
        interrupt: 0,
        reschedule: 0,
        select: 0,
        nic_latency: 0,
        copy_rate,
        pio_write_rate,
    }
}

/// The NIC latency (each end) that makes the one-word latency 1.5 µs, and the path
/// without it, with the assumed rates of `zero` (whose other costs are 0).
pub fn nic_latency(zero: &Costs) -> Result<(Time, Time), CalibrationError> {
    let path = run(zero, Scenario::OneWord)
        .map_err(CalibrationError::Sim)?
        .latency;
    let rest = positive("NIC latency", P::APP_TO_APP as i128 - path as i128)?;
    Ok((rest / 2, path))
}

/// Calibrates every CLAN host cost (see the module documentation) with the model's copy
/// rate, [`P::COPY_RATE`], and PIO write rate, [`P::pio_write_rate`].
pub fn calibrate() -> Result<Calibration, CalibrationError> {
    calibrate_with(P::COPY_RATE, P::pio_write_rate())
}

/// Calibrates every CLAN host cost with another copy rate and PIO write rate [bytes/s]
/// (to show what depends on those figures, which the calibration inputs do not fix).
pub fn calibrate_with(copy_rate: f64, pio_write_rate: f64) -> Result<Calibration, CalibrationError> {
    let zero = assumed(copy_rate, pio_write_rate);
    let (nic, path) = nic_latency(&zero)?;
    let mut costs = Costs {
        nic_latency: nic,
        ..zero
    };
    let ow = run(&costs, Scenario::OneWay)
        .map_err(CalibrationError::Sim)?
        .latency;
    let copy40 = costs.copy(P::MESSAGE_BYTES) as i128;
    let s = (SEC as f64 / PUBLISHED.clan_transactions.value).round() as i128;
    let rtt = (PUBLISHED.clan_rtt_poll.value * US as f64).round() as i128;
    let rtt_sleep = (PUBLISHED.clan_rtt_sleep.value * US as f64).round() as i128;
    let ev = positive("Tripwire event cost", rtt - s - 2 * ow as i128 - copy40)?;
    let work = positive("server work", s - ev as i128 - copy40)?;
    let wake = positive("wake-up", rtt_sleep - rtt)?;
    costs.tripwire_event = ev;
    costs.server_work = work;
    costs.interrupt = wake / 3;
    costs.reschedule = wake / 3;
    costs.select = wake - 2 * (wake / 3);
    // OW is taken for a message at ring offset 0; successive 40-byte messages fall
    // differently on the 32-byte blocks (the pointer's packet waits behind a longer or
    // shorter data packet), so the mean round trip differs a little from the closed form.
    // One correction, on the simulated mean, takes that in: with the server work S - event -
    // copy(40), a round trip is 2·OW + S + event + copy(40), one for one in the event cost.
    let rt = Scenario::RoundTrip { gap: 0, count: 41 };
    let first = mean(&run(&costs, rt).map_err(CalibrationError::Sim)?.rtts);
    let delta = rtt as f64 - first;
    costs.tripwire_event = positive("Tripwire event cost", (ev as f64 + delta).round() as i128)?;
    costs.server_work = positive("server work", s - costs.tripwire_event as i128 - copy40)?;
    let one = run(&costs, Scenario::OneWord).map_err(CalibrationError::Sim)?;
    let poll = run(&costs, rt).map_err(CalibrationError::Sim)?;
    let sleep = run(
        &costs,
        Scenario::RoundTrip {
            gap: P::SLEEP_GAP,
            count: 41,
        },
    )
    .map_err(CalibrationError::Sim)?;
    let tx = run(
        &costs,
        Scenario::Transactions {
            outstanding: 64,
            count: 6000,
        },
    )
    .map_err(CalibrationError::Sim)?;
    Ok(Calibration {
        costs,
        path_without_nics: path,
        one_way: ow,
        server_time: s as Time,
        app_to_app_us: us(one.latency),
        rtt_poll_us: mean(&poll.rtts) / US as f64,
        rtt_sleep_us: mean(&sleep.rtts) / US as f64,
        transactions_per_s: rate(&tx.completions),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The spec's calibration figures come out within 5 % (in fact within a fraction of a
    /// per cent: the closed forms are what the simulation does).
    #[test]
    fn calibration_reproduces_its_inputs() {
        let c = calibrate().unwrap();
        let dev = |x: f64, p: f64| (x / p - 1.0).abs();
        assert!(dev(c.app_to_app_us, 1.5) < 0.001, "{c:?}");
        assert!(dev(c.rtt_poll_us, 7.9) < 0.01, "{c:?}");
        assert!(dev(c.rtt_sleep_us, 16.8) < 0.01, "{c:?}");
        assert!(dev(c.transactions_per_s, 461_000.0) < 0.02, "{c:?}");
        // The costs are physical and the wake-up is their sum.
        let k = c.costs;
        assert!(
            k.tripwire_event > 0 && k.server_work > 0 && k.nic_latency > 0,
            "{k:?}"
        );
        assert_eq!(k.wake(), 8_900_000);
    }

    /// The copy rate is ASSUMED: at half and double it, the calibration still reproduces
    /// every input (the event cost takes what copy(40) does not).
    #[test]
    fn the_calibration_does_not_rest_on_the_copy_rate() {
        let base = calibrate().unwrap();
        for rate in [P::COPY_RATE / 2.0, P::COPY_RATE * 2.0] {
            let c = calibrate_with(rate, P::pio_write_rate()).unwrap();
            let dev = |x: f64, p: f64| (x / p - 1.0).abs();
            assert!(dev(c.app_to_app_us, 1.5) < 0.001, "{c:?}");
            assert!(dev(c.rtt_poll_us, 7.9) < 0.01, "{c:?}");
            assert!(dev(c.rtt_sleep_us, 16.8) < 0.01, "{c:?}");
            assert!(dev(c.transactions_per_s, 461_000.0) < 0.02, "{c:?}");
            // What moved is the split of each event's handling between the copy and the
            // event cost; their sum, and the server's work, stay.
            let per_event = |k: &Costs| k.tripwire_event + k.copy(P::MESSAGE_BYTES);
            assert!(
                per_event(&c.costs).abs_diff(per_event(&base.costs)) < 1000,
                "{c:?}"
            );
            assert_eq!(c.costs.server_work, base.costs.server_work);
            assert_ne!(c.costs.tripwire_event, base.costs.tripwire_event);
        }
    }

    /// The spec says to calibrate the PIO write rate from the round trip and transaction
    /// figures, but they cannot fix it: each figure that holds PIO time also fixes a free
    /// cost (the 1.5 µs the NICs' latency, the 7.9 µs the event cost, 461,000/s the
    /// server's work), which takes up any other rate. A third faster PIO reproduces every
    /// input too.
    #[test]
    fn the_figures_do_not_fix_the_pio_write_rate() {
        let base = calibrate().unwrap();
        let c = calibrate_with(P::COPY_RATE, P::pio_write_rate() * 4.0 / 3.0).unwrap();
        let dev = |x: f64, p: f64| (x / p - 1.0).abs();
        assert!(dev(c.app_to_app_us, 1.5) < 0.001, "{c:?}");
        assert!(dev(c.rtt_poll_us, 7.9) < 0.01, "{c:?}");
        assert!(dev(c.rtt_sleep_us, 16.8) < 0.01, "{c:?}");
        assert!(dev(c.transactions_per_s, 461_000.0) < 0.02, "{c:?}");
        assert!(c.costs.nic_latency > base.costs.nic_latency, "{c:?}");
        assert!(c.costs.tripwire_event != base.costs.tripwire_event, "{c:?}");
        assert_ne!(c.one_way, base.one_way);
        // Nor does a PIO stream tell them apart: the receiving NIC writes each 32-byte
        // packet in a bus transaction of its own, so the receiver's bus bounds it.
        let pio_stream = |k: &Costs| {
            let o = run(
                k,
                Scenario::Stream {
                    size: 512,
                    count: 200,
                    ring: P::QUEUE_BYTES,
                },
            )
            .unwrap();
            super::super::bandwidth(&o.consumed)
        };
        let (fast, slow) = (pio_stream(&c.costs), pio_stream(&base.costs));
        assert!((fast / slow - 1.0).abs() < 0.01, "{fast} {slow}");
    }

    /// Only the sum of interrupt, reschedule and select matters: another split gives the
    /// same round trips.
    #[test]
    fn the_wake_up_split_does_not_change_any_result() {
        let c = calibrate().unwrap();
        let mut other = c.costs;
        other.interrupt = c.costs.wake() - 2;
        other.reschedule = 1;
        other.select = 1;
        let s = Scenario::RoundTrip {
            gap: P::SLEEP_GAP,
            count: 10,
        };
        assert_eq!(run(&c.costs, s).unwrap(), run(&other, s).unwrap());
    }
}
