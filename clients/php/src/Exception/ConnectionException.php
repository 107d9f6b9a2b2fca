<?php

declare(strict_types=1);

namespace Lectern\Exception;

/** No response: the connection failed or timed out (`type` is `connection_error`, `status` null). */
final class ConnectionException extends LecternException
{
}
