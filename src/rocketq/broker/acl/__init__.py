"""Access control (RocketMQ 4.x plain ACL): ``plain_acl.yml`` accounts checked before every
request by one hook on the broker's remoting server."""
