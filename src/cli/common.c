/* Pieces every subcommand uses: device/GID setup, JSON output, parsing. */
#include <errno.h>
#include <stdio.h>

#include "cli.h"

int cli_dev_open(const struct cli_dev_opts *o, const char *local_ip, struct cli_dev *d)
{
	const struct rk_port_info *pi;
	struct rk_gid_want want = {.index = (int)o->gid_index, .ip = local_ip};
	struct rk_device *dev;
	int ret;

	ret = rk_device_open(o->device, &dev);
	if (ret)
		return ret;
	ret = rk_port_check_active(dev, (uint8_t)o->port);
	if (ret)
		goto err_close_dev;
	pi = rk_device_port(dev, (uint8_t)o->port);
	d->has_gid = false;
	if (pi->link_layer == IBV_LINK_LAYER_ETHERNET || o->gid_index >= 0) {
		ret = rk_gid_select(dev, pi->port_num, &want, &d->gid);
		if (ret)
			goto err_close_dev;
		d->has_gid = true;
	}
	d->dev = dev;
	d->port = pi->port_num;
	return 0;

err_close_dev:
	rk_device_close(dev);
	return ret;
}

void cli_dev_close(struct cli_dev *d)
{
	rk_device_close(d->dev);
	d->dev = NULL;
}

void cli_json_print(json_object *doc)
{
	puts(json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY |
							 JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(doc);
}

int cli_parse(const char *cmd, const char *usage, const char *description,
	      const struct rk_opt *opts, int argc, char **argv, int *first_arg_p)
{
	int ret = rk_opts_parse(cmd, opts, argc, argv, first_arg_p);

	if (ret == 1) {
		rk_opts_help(stdout, usage, description, opts);
		return CLI_OK;
	}
	if (ret)
		return CLI_USAGE;
	return -1;
}

int cli_check_role_args(const char *cmd, bool server, int argc, char **argv, int first)
{
	if (server && first < argc) {
		fprintf(stderr, "rdmakit %s: a server takes no HOST ('%s')\n", cmd, argv[first]);
		return CLI_USAGE;
	}
	if (!server && first != argc - 1) {
		fprintf(stderr, "rdmakit %s: give the server's address (or --server)\n", cmd);
		return CLI_USAGE;
	}
	return -1;
}

void cli_conn_opts(struct rk_conn_opts *co, bool server, const char *host, uint64_t port, bool cm,
		   const struct cli_dev_opts *dev, int timeout_ms, uint64_t wait_s)
{
	co->server = server;
	co->host = server ? NULL : host;
	co->port = (uint16_t)port;
	co->cm = cm;
	co->device = dev->device;
	co->port_num = (uint8_t)dev->port;
	co->gid_index = (int)dev->gid_index;
	co->timeout_ms = timeout_ms;
	co->accept_timeout_ms = wait_s ? (int)wait_s * 1000 : -1;
}
