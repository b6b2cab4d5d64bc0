# Golden setup of phpmoney (sourced from the repository root as root, bash -eo pipefail).
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# composer.json requires ext-bcmath, which Debian's phpunit does not pull in; PHPUnit itself
# comes from Debian (Packagist is out of reach), and Composer only writes the autoloader that
# phpunit.xml bootstraps (dump-autoload downloads nothing).
apt-get install -y -qq --no-install-recommends php-cli php-bcmath phpunit composer
composer dump-autoload --no-interaction
