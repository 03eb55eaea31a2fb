"""rocketq.remoting.protocol: what a remoting command says (RocketMQ's ``remoting/protocol``).

The command and its codes, the typed headers of its ``extFields``, the JSON bodies and the
fastjson dialect they are written in. Nothing here does IO; the transport that moves commands
(codec, channel, server, client) is the parent package. Each name has one module: import it
from there (``rocketq.remoting.protocol.headers``, ``...topic_route``, ...).
"""
