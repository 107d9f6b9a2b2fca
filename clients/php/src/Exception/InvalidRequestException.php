<?php

declare(strict_types=1);

namespace Lectern\Exception;

/** 400, 405, 408, 414 or 431: the request needs fixing (e.g. a page size outside 1–100). */
final class InvalidRequestException extends LecternException
{
}
