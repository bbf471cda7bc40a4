//! The Penn interface's receive side in time (spec, "Reassembler (receive): a four-stage
//! pipeline"): cell managers (HEC and CRC-10 checks, VCI/MID/length; 2.6 µs per cell, five in
//! parallel), the CAM look-up controller (550 ns), the linked-list manager (600 ns) and the
//! reassembly buffer controller (ASSUMED 550 ns: [`BUFFER_WRITE_TIME`]). The slowest stage
//! bounds the rate, the sum of the stages is a cell's latency; both are measured here by
//! running cells through the pipeline, not computed.
//!
//! The pipeline keeps cells in order: cell managers are used in turn, each stage starts cells
//! in order, and a stage whose output FIFO is full holds its finished cell (blocking after
//! service). The link cannot be held back, so a cell finding the receive FIFO full is lost.
//! FIFO sizes are not published (ASSUMED: [`RX_FIFO_CELLS`], [`STAGE_FIFO_CELLS`]).
//!
//! What the stages do to the bytes (checks, CAM with 256 circuits and 256 MIDs, lists) is
//! `protocol::atm::aal34::Reassembler` with `ReassemblerConfig::PENN`, driven in the same
//! order.

use std::collections::VecDeque;

use crate::protocol::atm::aal34::{
    Reassembler, ReassemblerConfig, ReassemblyError, SegmentError, Segmenter, cell_count,
};
use crate::protocol::atm::{CELL_BYTES, VirtualCircuit};
use crate::rng::Stream;
use crate::time::{SEC, Time, US};

use super::end_to_end::fill_random;
use super::link::Link;
use super::params::{
    BUFFER_WRITE_TIME, CAM_CIRCUITS, CAM_LOOKUP_TIME, CAM_MIDS, CELL_MANAGER_TIME, CELL_MANAGERS,
    LIST_MANAGER_TIME, RX_FIFO_CELLS, STAGE_FIFO_CELLS,
};

/// One pipeline stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stage {
    pub name: &'static str,
    /// Units working in parallel.
    pub units: usize,
    /// Time one unit spends on a cell [ps].
    pub time: Time,
}

impl Stage {
    /// Time per cell of the stage as a whole: one unit's time over the units [ps].
    pub fn per_cell(&self) -> Time {
        self.time / self.units.max(1) as Time
    }
}

/// The four stages of the Penn reassembler.
pub const PENN_STAGES: [Stage; 4] = [
    Stage {
        name: "cell manager",
        units: CELL_MANAGERS,
        time: CELL_MANAGER_TIME,
    },
    Stage {
        name: "CAM look-up controller",
        units: 1,
        time: CAM_LOOKUP_TIME,
    },
    Stage {
        name: "linked-list manager",
        units: 1,
        time: LIST_MANAGER_TIME,
    },
    Stage {
        name: "reassembly buffer controller",
        units: 1,
        time: BUFFER_WRITE_TIME,
    },
];

#[derive(Debug, Clone)]
struct StageState {
    stage: Stage,
    /// Input FIFO size [cells].
    fifo: usize,
    /// When each unit handed on its last cell [ps].
    unit_free: Vec<Time>,
    last_start: Time,
    last_leave: Time,
    /// Start times of the last `fifo` cells, oldest first: the input FIFO has room for a new
    /// cell once the cell `fifo` places ahead of it has started.
    starts: VecDeque<Time>,
    busy: Time,
}

impl StageState {
    /// When the input FIFO has room for the next cell (0 if it has room already).
    fn room(&self) -> Time {
        if self.starts.len() < self.fifo {
            0
        } else {
            self.starts.front().copied().unwrap_or(0)
        }
    }
}

/// The receive pipeline.
#[derive(Debug, Clone)]
pub struct Pipeline {
    stages: Vec<StageState>,
    accepted: u64,
    lost: u64,
    first_arrival: Option<Time>,
    last_done: Time,
}

impl Pipeline {
    /// A pipeline of `stages`; the first stage's input FIFO holds `rx_fifo` cells, the others
    /// `stage_fifo` (each at least one).
    pub fn new(stages: &[Stage], rx_fifo: usize, stage_fifo: usize) -> Pipeline {
        Pipeline {
            stages: stages
                .iter()
                .enumerate()
                .map(|(j, &stage)| {
                    let fifo = if j == 0 { rx_fifo } else { stage_fifo }.max(1);
                    StageState {
                        stage,
                        fifo,
                        unit_free: vec![0; stage.units.max(1)],
                        last_start: 0,
                        last_leave: 0,
                        starts: VecDeque::with_capacity(fifo),
                        busy: 0,
                    }
                })
                .collect(),
            accepted: 0,
            lost: 0,
            first_arrival: None,
            last_done: 0,
        }
    }

    /// The Penn pipeline with the assumed FIFO sizes.
    pub fn penn() -> Pipeline {
        Pipeline::new(&PENN_STAGES, RX_FIFO_CELLS, STAGE_FIFO_CELLS)
    }

    /// A cell arrives from the link at `arrival`; returns when its body is in the reassembly
    /// buffer, or `None` if the receive FIFO was full and the cell is lost.
    pub fn push(&mut self, arrival: Time) -> Option<Time> {
        if self.stages.first().is_some_and(|s| s.room() > arrival) {
            self.lost += 1;
            return None;
        }
        Some(self.run(arrival))
    }

    /// A cell offered by a source that waits while the receive FIFO is full (to measure the
    /// pipeline's own rate); returns when its body is in the buffer.
    pub fn push_waiting(&mut self, offered: Time) -> Time {
        let room = self.stages.first().map_or(0, StageState::room);
        self.run(offered.max(room))
    }

    fn run(&mut self, arrival: Time) -> Time {
        self.first_arrival.get_or_insert(arrival);
        let index = self.accepted;
        self.accepted += 1;
        let mut enter = arrival;
        for j in 0..self.stages.len() {
            let next_room = self.stages.get(j + 1).map_or(0, StageState::room);
            let s = &mut self.stages[j];
            let unit = (index % s.unit_free.len() as u64) as usize;
            let start = enter.max(s.last_start).max(s.unit_free[unit]);
            let leave = (start + s.stage.time).max(s.last_leave).max(next_room);
            s.unit_free[unit] = leave;
            s.last_start = start;
            s.last_leave = leave;
            if s.starts.len() == s.fifo {
                s.starts.pop_front();
            }
            s.starts.push_back(start);
            s.busy += s.stage.time;
            enter = leave;
        }
        self.last_done = enter;
        enter
    }

    /// Cells accepted.
    pub fn accepted(&self) -> u64 {
        self.accepted
    }

    /// Cells lost at a full receive FIFO.
    pub fn lost(&self) -> u64 {
        self.lost
    }

    /// Per stage: the stage and the share of its units' time spent on cells from the first
    /// arrival to the last cell done.
    pub fn utilization(&self) -> Vec<(Stage, f64)> {
        let span = self
            .last_done
            .saturating_sub(self.first_arrival.unwrap_or(0))
            .max(1) as f64;
        self.stages
            .iter()
            .map(|s| (s.stage, s.busy as f64 / (s.unit_free.len() as f64 * span)))
            .collect()
    }

    /// The stage busiest so far: under saturation, the one that bounds the rate.
    pub fn bottleneck(&self) -> Option<(Stage, f64)> {
        self.utilization().into_iter().max_by(|a, b| a.1.total_cmp(&b.1))
    }
}

/// The `reassembler` experiment's figures.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    /// Cells run through the saturated pipeline.
    pub cells: u64,
    /// Cells per second out of the saturated pipeline, second half of the run [cells/s].
    pub cell_rate_per_s: f64,
    /// The same on whole 53-byte cells [Mb/s].
    pub mbit_per_s: f64,
    /// The busiest stage under saturation and its utilization.
    pub bottleneck: (Stage, f64),
    /// Every stage's utilization under saturation.
    pub utilization: Vec<(Stage, f64)>,
    /// Mean and largest arrival-to-buffer latency with cells arriving at the OC-3c rate [µs].
    pub latency_mean_us: f64,
    pub latency_max_us: f64,
    /// Cells lost at the receive FIFO at the OC-3c rate.
    pub lost_at_link_rate: u64,
    /// Reassemblies open at once (circuits × MIDs).
    pub concurrent: usize,
    pub frames_sent: u64,
    pub frames_intact: u64,
    /// What the CAMs said to one more BOM while every MID entry was taken.
    pub extra_bom: Option<ReassemblyError>,
}

/// Circuits and MIDs per circuit of the CAM workload: 16 × 16 = 256 reassemblies at once,
/// the CAMs' capacity.
const WORKLOAD_CIRCUITS: u16 = 16;
const WORKLOAD_MIDS: u16 = 16;
/// Frame size of the CAM workload [bytes]: 24 cells.
const WORKLOAD_FRAME: usize = 1024;

/// Runs `rounds` rounds of 256 frames, interleaved cell by cell so that every CAM entry is in
/// use, through the pipeline twice: once offered as fast as it takes them (its rate and
/// bottleneck), once at the OC-3c cell rate (latency). Every cell is real and every frame is
/// reassembled by the Penn codec and compared with what was sent.
pub fn measure(rounds: usize, mut data: Stream) -> Result<Measured, SegmentError> {
    let mut segmenters = Vec::new();
    for c in 0..WORKLOAD_CIRCUITS {
        for m in 0..WORKLOAD_MIDS {
            segmenters.push((
                (VirtualCircuit::new(0, 100 + c), m),
                Segmenter::new(VirtualCircuit::new(0, 100 + c), m)?,
            ));
        }
    }
    let mut reassembler = Reassembler::new(ReassemblerConfig {
        max_circuits: CAM_CIRCUITS,
        max_mids: CAM_MIDS,
        ..ReassemblerConfig::PENN
    });
    let mut saturated = Pipeline::penn();
    let mut paced = Pipeline::penn();
    let link = Link::new();
    let mut done = Vec::new();
    let (mut latency_sum, mut latency_max) = (0u64, 0u64);
    let mut frames: Vec<Vec<u8>> = vec![vec![0u8; WORKLOAD_FRAME]; segmenters.len()];
    let mut cells: Vec<Vec<[u8; CELL_BYTES]>> = vec![Vec::new(); segmenters.len()];
    let (mut sent, mut intact) = (0u64, 0u64);
    let mut extra_bom = None;
    let per_frame = cell_count(WORKLOAD_FRAME);
    let mut n = 0u64;
    for round in 0..rounds {
        for (k, (_, seg)) in segmenters.iter_mut().enumerate() {
            fill_random(&mut data, &mut frames[k]);
            cells[k].clear();
            cells[k].extend(seg.segment(&frames[k])?);
            sent += 1;
        }
        // Column by column: cell i of every frame goes before cell i + 1 of any, so that all
        // 256 reassemblies are open at once.
        #[allow(clippy::needless_range_loop)]
        for i in 0..per_frame {
            for (k, ((circuit, mid), _)) in segmenters.iter().enumerate() {
                done.push(saturated.push_waiting(0));
                let arrival = link.arrival(n);
                n += 1;
                match paced.push(arrival) {
                    Some(t) => {
                        latency_sum += t - arrival;
                        latency_max = latency_max.max(t - arrival);
                    }
                    None => continue,
                }
                if let Some(f) = reassembler.push_cell(&cells[k][i]).into_frame() {
                    intact += u64::from(f.circuit == *circuit && f.mid == *mid && f.data == frames[k]);
                }
            }
            if round == 0 && i == 0 {
                // Every entry is taken: one more datagram must be refused.
                let mut other = Segmenter::new(VirtualCircuit::new(0, 999), 0)?;
                let bom = other.segment(&frames[0])?.next();
                extra_bom = bom.and_then(|c| reassembler.push_cell(&c).outcome.err());
            }
        }
    }
    let cells_run = done.len() as u64;
    let half = done.len() / 2;
    let span = done.last().copied().unwrap_or(0) - done.get(half.saturating_sub(1)).copied().unwrap_or(0);
    let cell_rate_per_s = (done.len() - half) as f64 / (span.max(1) as f64 / SEC as f64);
    let accepted = paced.accepted().max(1);
    Ok(Measured {
        cells: cells_run,
        cell_rate_per_s,
        mbit_per_s: cell_rate_per_s * (CELL_BYTES * 8) as f64 / 1e6,
        bottleneck: saturated.bottleneck().unwrap_or((PENN_STAGES[0], 0.0)),
        utilization: saturated.utilization(),
        latency_mean_us: latency_sum as f64 / accepted as f64 / US as f64,
        latency_max_us: latency_max as f64 / US as f64,
        lost_at_link_rate: paced.lost(),
        concurrent: segmenters.len(),
        frames_sent: sent,
        frames_intact: intact,
        extra_bom,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::NS;

    /// Five cell managers at 2.6 µs give 520 ns per cell; the CAM takes 550 ns and the
    /// list manager 600 ns, so the list manager bounds the rate: 1/600 ns = 1.667 M cells/s,
    /// 706.7 Mb/s on 53-byte cells. A lone cell takes 2.6 + 0.55 + 0.6 + 0.55 = 4.3 µs.
    #[test]
    fn penn_pipeline_arithmetic() {
        let per_cell: Vec<Time> = PENN_STAGES.iter().map(Stage::per_cell).collect();
        assert_eq!(per_cell, [520 * NS, 550 * NS, 600 * NS, 550 * NS]);
        let mut p = Pipeline::penn();
        let n = 10_000;
        let done: Vec<Time> = (0..n).map(|_| p.push_waiting(0)).collect();
        // Steady state: one cell per 600 ns exactly.
        let half = n / 2;
        assert_eq!(done[n - 1] - done[half - 1], (n - half) as Time * 600 * NS);
        let (stage, u) = p.bottleneck().unwrap();
        assert_eq!(stage.name, "linked-list manager");
        assert!(u > 0.999, "{u}");
        let rate: f64 = 1e12 / 600e3;
        assert!((rate * 424.0 / 1e6 - 706.67).abs() < 0.01);
        // A lone cell: the sum of the stages.
        let mut q = Pipeline::penn();
        assert_eq!(q.push(1_000_000), Some(1_000_000 + 4_300 * NS));
    }

    #[test]
    fn in_order_and_lossless_at_the_link_rate() {
        let mut p = Pipeline::penn();
        let mut last = 0;
        for i in 0..5_000u64 {
            let arrival = i * 2_831_197;
            let done = p.push(arrival).unwrap();
            assert_eq!(done - arrival, 4_300 * NS);
            assert!(done > last);
            last = done;
        }
        assert_eq!(p.lost(), 0);
    }

    #[test]
    fn a_burst_faster_than_the_pipeline_overflows_the_receive_fifo() {
        // Cells every 100 ns into a pipeline that takes one per 600 ns.
        let mut p = Pipeline::penn();
        let done: Vec<Option<Time>> = (0..200u64).map(|i| p.push(i * 100 * NS)).collect();
        assert!(p.lost() > 0);
        assert_eq!(p.lost() + p.accepted(), 200);
        // The first cells all get in: the FIFO plus what the stages hold.
        assert!(done[..RX_FIFO_CELLS].iter().all(Option::is_some));
    }
}
