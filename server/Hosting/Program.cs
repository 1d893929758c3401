namespace Jackdaw.Server.Hosting;

/// <summary>
/// <c>jackdaw [options]</c>, <c>jackdaw healthcheck [url]</c>, <c>jackdaw --help</c>. Whatever
/// stops the server early is told in one line on stderr: exit code 2 for what the user can fix
/// (an unknown option, a bad value, an address in use), 1 for anything else.
/// </summary>
public static class Program
{
    private const int Failed = 1;
    private const int BadUsage = 2;

    public static async Task<int> Main(string[] args)
    {
        try
        {
            return await RunAsync(args).ConfigureAwait(false);
        }
        catch (Exception e)
        {
            // Not a user's mistake: one line rather than an unhandled exception (which aborts the
            // process with 134 and prints the stack twice).
            return await FailAsync($"{e.GetType().Name}: {e.Message}", Failed).ConfigureAwait(false);
        }
    }

    private static async Task<int> RunAsync(string[] args)
    {
        CommandLine commandLine;
        try
        {
            commandLine = CommandLine.Parse(args);
        }
        catch (InvalidOperationException e)
        {
            return await FailAsync(e.Message, BadUsage).ConfigureAwait(false);
        }
        if (commandLine.Help)
        {
            await Console.Out.WriteAsync(CommandLine.HelpText(BuildInfo.FromAssembly(typeof(Program).Assembly).Version)).ConfigureAwait(false);
            return 0;
        }
        if (commandLine.HealthCheckUrl is { } url)
        {
            return await HealthCheck.RunAsync(url).ConfigureAwait(false);
        }

        JackdawHost host;
        try
        {
            host = JackdawHost.Create(commandLine.Settings);
        }
        catch (InvalidOperationException e)
        {
            return await FailAsync(e.Message, BadUsage).ConfigureAwait(false);
        }
        await using (host.ConfigureAwait(false))
        {
            try
            {
                await host.StartAsync().ConfigureAwait(false);
            }
            catch (Exception e) when (StartupFailure.IsAddressInUse(e))
            {
                return await FailAsync(StartupFailure.AddressInUse(e, host.Server.Options.Urls), BadUsage).ConfigureAwait(false);
            }
            catch (Exception e)
            {
                // The host has logged it with its stack ("Hosting failed to start").
                return await FailAsync($"failed to start: {e.Message}", Failed).ConfigureAwait(false);
            }
            await host.WaitForShutdownAsync().ConfigureAwait(false);
        }
        return 0;
    }

    private static async Task<int> FailAsync(string message, int exitCode)
    {
        await Console.Error.WriteLineAsync($"jackdaw: {message}").ConfigureAwait(false);
        return exitCode;
    }
}
