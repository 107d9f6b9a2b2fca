<?php

declare(strict_types=1);

namespace Lectern\Exception;

/** 404 `resource_not_found`: the form (or path) does not exist. */
final class NotFoundException extends LecternException
{
}
