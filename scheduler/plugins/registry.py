"""The in-tree plugin registry: one explicit map from plugin name to factory."""

from __future__ import annotations

from scheduler.framework.interface import DuplicatePluginError, PluginFactory
from scheduler.plugins import (
    defaultbinder,
    defaultpreemption,
    gangscheduling,
    imagelocality,
    nodeaffinity,
    nodename,
    nodeports,
    nodeunschedulable,
    nodevolumelimits,
    queuesort,
    schedulinggates,
    tainttoleration,
    volumebinding,
    volumerestrictions,
    volumezone,
)
from scheduler.plugins.coscheduling import plugin as coscheduling
from scheduler.plugins.interpodaffinity import plugin as interpodaffinity
from scheduler.plugins.loadaware import plugin as loadaware
from scheduler.plugins.nodenumaresource import plugin as nodenumaresource
from scheduler.plugins.noderesources import balanced_allocation, fit
from scheduler.plugins.podtopologyspread import plugin as podtopologyspread
from scheduler.plugins.reservation import plugin as reservation

IN_TREE: dict[str, PluginFactory] = {
    schedulinggates.NAME: schedulinggates.new,
    queuesort.NAME: queuesort.new,
    nodeunschedulable.NAME: nodeunschedulable.new,
    nodename.NAME: nodename.new,
    tainttoleration.NAME: tainttoleration.new,
    nodeaffinity.NAME: nodeaffinity.new,
    nodeports.NAME: nodeports.new,
    fit.NAME: fit.new,
    volumerestrictions.NAME: volumerestrictions.new,
    nodevolumelimits.NAME: nodevolumelimits.new,
    volumebinding.NAME: volumebinding.new,
    volumezone.NAME: volumezone.new,
    podtopologyspread.NAME: podtopologyspread.new,
    interpodaffinity.NAME: interpodaffinity.new,
    defaultpreemption.NAME: defaultpreemption.new,
    balanced_allocation.NAME: balanced_allocation.new,
    imagelocality.NAME: imagelocality.new,
    defaultbinder.NAME: defaultbinder.new,
    gangscheduling.NAME: gangscheduling.new,
    coscheduling.NAME: coscheduling.new,
    reservation.NAME: reservation.new,
    loadaware.NAME: loadaware.new,
    nodenumaresource.NAME: nodenumaresource.new,
}


def new_registry(*extra: tuple[str, PluginFactory]) -> dict[str, PluginFactory]:
    """The in-tree plugins plus out-of-tree ones; a name may be registered only once."""
    registry = dict(IN_TREE)
    for name, factory in extra:
        if name in registry:
            raise DuplicatePluginError(f"a plugin named {name} already exists")
        registry[name] = factory
    return registry
