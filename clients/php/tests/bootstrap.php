<?php

declare(strict_types=1);

/*
 * Loads the client as a Composer-less project would (autoload.php), plus the test helpers. The
 * servers the tests talk to (the Lectern test server, the scripted API, the front controller) are
 * started by the helpers in Support/ on first use and stopped when the run ends.
 */

require dirname(__DIR__) . '/autoload.php';

spl_autoload_register(static function (string $class): void {
    $prefix = 'Lectern\\Tests\\';
    if (str_starts_with($class, $prefix)) {
        $file = __DIR__ . '/' . str_replace('\\', '/', substr($class, strlen($prefix))) . '.php';
        if (is_file($file)) {
            require $file;
        }
    }
});
