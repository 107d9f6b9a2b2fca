<?php

declare(strict_types=1);

namespace Lectern\Exception;

/** 403 `insufficient_permissions`: the key's role lacks the permission the endpoint needs. */
final class PermissionException extends LecternException
{
}
