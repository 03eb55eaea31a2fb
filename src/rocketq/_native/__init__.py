"""Compiled twins of hot paths: the record paths (``_record``, chosen by
``rocketq.common.native_record``) and the request frames, headers and reply heads
(``_remoting``, chosen by ``rocketq.remoting.native_frames``)."""
