//! The express engine's ids, one type for each kind of thing it numbers (a VC, a channel,
//! a switch, a node, a crossbar input, a flit slot), so that one kind cannot be passed
//! where another is expected: each indexes only its own records (`Recs<_, VcIx>`, …).
//! They are `u32`s, laid out in the engine's own numbering (`Express::new`); they meet
//! the general engine's numbers only at the edges: building the records, the routing
//! step, the results and the error messages.

use super::super::recs::{RecId, Zeroed};

macro_rules! ids {
    ($($(#[$doc:meta])* $name:ident;)*) => {$(
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
        #[repr(transparent)]
        pub(super) struct $name(pub(super) u32);

        impl RecId for $name {
            #[inline(always)]
            fn raw(self) -> usize {
                self.0 as usize
            }
        }

        // SAFETY: a `u32`, valid as zero bytes.
        unsafe impl Zeroed for $name {}
    )*};
}

ids! {
    /// A VC (as an output, its sender's side; as an input, its buffer): the VCs into a
    /// switch are `XSw::in_base` + their index among its inputs; VCs into hosts follow.
    VcIx;
    /// A channel: the channel out of port p of a switch is `XSw::port_base` + p; channels
    /// out of hosts follow.
    ChIx;
    /// A switch: the fabric's own switch number.
    SwIx;
    /// A node, switch or host: the fabric's own node number (switches first).
    NodeIx;
    /// A switch port as a crossbar input: `XSw::port_base` + its port.
    PortIx;
    /// A flit slot of the VCs' rings (`Sim::ring`): a VC's ring is `buf..buf + cap`.
    SlotIx;
}

impl VcIx {
    /// No VC: an output VC without an owner.
    pub(super) const NONE: VcIx = VcIx(u32::MAX);
    /// The owner of an output VC whose last tail has been sent but may not have passed
    /// (see `XVc::free_at`).
    pub(super) const HELD: VcIx = VcIx(u32::MAX - 1);
}

impl SwIx {
    /// No switch: the switch of a VC into a host.
    pub(super) const NONE: SwIx = SwIx(u32::MAX);

    /// The switch as a node (switches are the first nodes).
    #[inline(always)]
    pub(super) fn node(self) -> NodeIx {
        NodeIx(self.0)
    }
}
