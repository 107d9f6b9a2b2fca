<?php

declare(strict_types=1);

namespace Lectern\Exception;

/** 401: the API key is missing, malformed, unknown, revoked or inactive. */
final class AuthenticationException extends LecternException
{
}
