<?php

declare(strict_types=1);

namespace Lectern\Exception;

/**
 * 403 `insufficient_permissions`: the key's role or scopes lack the permission the endpoint needs,
 * or its forms leave out this form; the message names the permission (and the form).
 */
final class PermissionException extends LecternException
{
}
