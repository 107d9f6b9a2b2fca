<?php

declare(strict_types=1);

/*
 * Loads the Lectern client without Composer: `require __DIR__ . '/path/to/clients/php/autoload.php';`.
 * With Composer, its own autoloader does the same from composer.json.
 */

spl_autoload_register(static function (string $class): void {
    $prefix = 'Lectern\\';
    if (strncmp($class, $prefix, strlen($prefix)) !== 0) {
        return;
    }
    $file = __DIR__ . '/src/' . str_replace('\\', '/', substr($class, strlen($prefix))) . '.php';
    if (is_file($file)) {
        require $file;
    }
});

require_once __DIR__ . '/src/functions.php';
