namespace Jackdaw.Server.Hosting;

/// <summary>
/// Keeps one record out of the log: the generic host's "Hosting failed to start" (category
/// <c>Microsoft.Extensions.Hosting.Internal.Host</c>, event 11, HostedServiceStartupFaulted), with
/// its 30-line stack, when the failure is an address already in use. <see cref="Program"/> says
/// that in one line; any other startup failure is still logged whole. A decorator of the logger
/// factory, because filter rules see a category and a level but not the exception, and a rule
/// for the host's category would override the configured levels of that category.
/// </summary>
internal sealed class AddressInUseLogFilter(ILoggerFactory inner) : ILoggerFactory
{
    private const string HostCategory = "Microsoft.Extensions.Hosting.Internal.Host";

    public ILogger CreateLogger(string categoryName)
    {
        var logger = inner.CreateLogger(categoryName);
        return categoryName == HostCategory ? new Logger(logger) : logger;
    }

    public void AddProvider(ILoggerProvider provider) => inner.AddProvider(provider);

    public void Dispose() => inner.Dispose();

    private sealed class Logger(ILogger inner) : ILogger
    {
        public IDisposable? BeginScope<TState>(TState state)
            where TState : notnull => inner.BeginScope(state);

        public bool IsEnabled(LogLevel logLevel) => inner.IsEnabled(logLevel);

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
        {
            if (!StartupFailure.IsAddressInUse(exception))
            {
                inner.Log(logLevel, eventId, state, exception, formatter);
            }
        }
    }
}
