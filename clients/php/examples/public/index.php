<?php // public/index.php

require __DIR__ . '/../vendor/autoload.php';

$loader = new Lectern\RedirectLoader(
    new Lectern\Lectern(getenv('LECTERN_URL'), getenv('LECTERN_API_KEY'), maxRetries: 0, timeout: 2.0),
    cacheFile: __DIR__ . '/../var/lectern-redirects.json',
);

try {
    $matcher = $loader->matcher();
} catch (Lectern\Exception\LecternException $e) {
    // No copy of the redirects yet and Lectern out of reach: serve the site without them.
    error_log('Lectern redirects unavailable: ' . $e->getMessage());
    $matcher = null;
}

if ($matcher !== null && Lectern\applyRedirects($matcher)) {
    exit;
}

// … the site as usual (router, framework kernel, …)
