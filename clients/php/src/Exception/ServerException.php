<?php

declare(strict_types=1);

namespace Lectern\Exception;

/** 500 (or any other 5xx, or a body that is not the API's): a failure on the server; quote `requestId`. */
final class ServerException extends LecternException
{
}
