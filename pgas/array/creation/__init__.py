"""Creating distributed arrays: constructors, the ``*_like`` family, conversions and arrays built
where their elements live."""
