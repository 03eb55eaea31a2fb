"""Compiled twins of the record paths; ``rocketq.common.native_record`` chooses them."""
