//! The parts of the model an instantiation of the express engine has compiled in, as a type:
//! `Express<R, F>` runs a config only if `F::HAS` covers every feature the config uses
//! (`engine::features`), and a feature that is off is a constant `false`, so the code for
//! it is not in the instantiations that lack it and costs their runs nothing.
//!
//! Two features are switched this way: the invariant checks (`sim.check`) and output VCs
//! given in turn (`switch.vc_choice = "round-robin"`, BookSim2's VC allocators' pointers).
//! The second costs a store on every grant and a choice in the allocation, which the runs
//! without it should not pay (measured in docs/performance.md). The instantiations with it
//! also take BookSim2's separable switch and VC allocators on its cycle grid (`separable`,
//! switched on per run there), which come only with VCs given in turn. The rest of what the
//! engine takes (any host costs, VC-reuse delay and least time in the input buffer) is in
//! every instantiation. With the routing step (`R`: three kinds) that makes twelve
//! instantiations, chosen in `run_express`.

use crate::engine::features::{Feature, Features};

/// What an instantiation of the express engine has compiled in.
pub(crate) trait XFeat {
    /// The invariant checks (`sim.check`, `super::check`).
    const CHECK: bool;
    /// Output VCs given in turn: per switch input VC the output VC it was last given
    /// (`Express::va_last`); hosts take their injection VCs in turn (`Host::last_vc`).
    const VC_TURN: bool;
    /// Every feature this instantiation runs.
    const HAS: Features = has(Self::CHECK, Self::VC_TURN);
}

/// The instantiation with the checks (`CHECK`) and VCs in turn (`TURN`) compiled in or not.
pub(crate) struct Feat<const CHECK: bool, const TURN: bool>;

impl<const CHECK: bool, const TURN: bool> XFeat for Feat<CHECK, TURN> {
    const CHECK: bool = CHECK;
    const VC_TURN: bool = TURN;
}

/// The features of the instantiation with the checks and VCs in turn as given: those every
/// instantiation has, and these.
pub(crate) const fn has(check: bool, turn: bool) -> Features {
    let mut f = Features::NONE
        .with(Feature::VcReuseDelay)
        .with(Feature::FlitDelay);
    if check {
        f = f.with(Feature::Checks);
    }
    if turn {
        // (BookSim2's switch: its VC choice, and its allocators on its cycle grid.)
        f = f
            .with(Feature::VcInTurn)
            .with(Feature::SeparableAllocator)
            .with(Feature::SeparableVcAllocator);
    }
    f
}

/// Every feature some instantiation runs (`engine::features::EXPRESS`).
pub(crate) const ALL: Features = has(true, true);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_instantiation_has_what_it_compiles_in() {
        assert!(!<Feat<false, false>>::HAS.has(Feature::Checks));
        assert!(!<Feat<false, false>>::HAS.has(Feature::VcInTurn));
        assert!(<Feat<true, false>>::HAS.has(Feature::Checks));
        assert!(<Feat<false, true>>::HAS.has(Feature::VcInTurn));
        assert!(!<Feat<false, true>>::HAS.has(Feature::Checks));
        assert_eq!(<Feat<true, true>>::HAS, ALL);
        // BookSim2's separable allocators come with its VCs in turn.
        assert!(<Feat<false, true>>::HAS.has(Feature::SeparableAllocator));
        assert!(<Feat<false, true>>::HAS.has(Feature::SeparableVcAllocator));
        assert!(!<Feat<true, false>>::HAS.has(Feature::SeparableAllocator));
        assert!(!ALL.has(Feature::SeparableOffGrid));
        for f in [Feature::VcReuseDelay, Feature::FlitDelay] {
            assert!(<Feat<false, false>>::HAS.has(f));
        }
    }
}
