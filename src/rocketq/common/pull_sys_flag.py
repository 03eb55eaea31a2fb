"""The sysFlag bits of a PULL_MESSAGE request (RocketMQ's PullSysFlag)."""

from __future__ import annotations

FLAG_COMMIT_OFFSET = 0x1
FLAG_SUSPEND = 0x2
FLAG_SUBSCRIPTION = 0x4
FLAG_CLASS_FILTER = 0x8
FLAG_LITE_PULL_MESSAGE = 0x10


def build_sys_flag(
    *, commit_offset: bool, suspend: bool, subscription: bool, class_filter: bool = False
) -> int:
    flag = FLAG_COMMIT_OFFSET if commit_offset else 0
    flag |= FLAG_SUSPEND if suspend else 0
    flag |= FLAG_SUBSCRIPTION if subscription else 0
    return flag | (FLAG_CLASS_FILTER if class_filter else 0)


def has_commit_offset_flag(sys_flag: int) -> bool:
    return bool(sys_flag & FLAG_COMMIT_OFFSET)


def has_suspend_flag(sys_flag: int) -> bool:
    return bool(sys_flag & FLAG_SUSPEND)


def has_subscription_flag(sys_flag: int) -> bool:
    return bool(sys_flag & FLAG_SUBSCRIPTION)
