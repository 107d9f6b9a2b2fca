<?php

declare(strict_types=1);

namespace Lectern\Exception;

/** 503 `service_unavailable`: the server cannot reach its database; `retryAfter` says when to try again. */
final class ServiceUnavailableException extends LecternException
{
}
