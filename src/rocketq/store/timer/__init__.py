"""RocketMQ 5's timer wheel: timer messages held in ``rmq_sys_wheel_timer`` until their time.

``timer_wheel`` (the ``timerwheel`` file), ``timer_log`` (``timerlog/``) and
``timer_checkpoint`` (``config/timercheck``) are the formats; ``timer_message_store`` the
services and recovery, reaching the store through ``store_host``'s protocol; ``timer_hook``
the send-side rewrite other code calls to put a timer message
(``MessageStore.timer_message_store.transform(msg)`` then a put); ``delivery_marks`` the
restart window that keeps a second copy out after a kill -9. See docs/timer.md.
"""

from rocketq.store.timer.timer_hook import TIMER_TOPIC, check_if_timer_message
from rocketq.store.timer.timer_message_store import TimerMessageStore

__all__ = ["TIMER_TOPIC", "TimerMessageStore", "check_if_timer_message"]
