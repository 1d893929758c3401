using Jackdaw.Client;
using Jackdaw.Client.Subscriptions;

// dotnet Jackdaw.Tests.SubscriptionWorker.dll <server url> <database> <subscription> <received file>
//
// Runs the .NET client's subscription worker (TakeOver, batches of 256, reconnecting every 100 ms)
// and appends the id of every document it receives to <received file>, one per line, written to the
// operating system before the batch is acknowledged: a SIGKILL loses nothing that was acknowledged.
if (args.Length != 4)
{
    Console.Error.WriteLine("usage: Jackdaw.Tests.SubscriptionWorker <server url> <database> <subscription> <received file>");
    return 2;
}
var (url, database, subscription, file) = (args[0], args[1], args[2], args[3]);
using var store = new DocumentStore { Urls = [url], Database = database }.Initialize();
await using var received = new FileStream(file, FileMode.Append, FileAccess.Write, FileShare.ReadWrite);
await using var worker = store.Subscriptions.GetSubscriptionWorker<Order>(new SubscriptionWorkerOptions(subscription)
{
    Strategy = SubscriptionOpeningStrategy.TakeOver,
    MaxDocsPerBatch = 256,
    TimeToWaitBeforeConnectionRetry = TimeSpan.FromMilliseconds(100),
    MaxErroneousPeriod = TimeSpan.FromMinutes(10),
});
worker.OnEstablishedSubscriptionConnection += () => Console.WriteLine("connected");
await worker.Run(batch =>
{
    var lines = new System.Text.StringBuilder();
    foreach (var item in batch.Items)
        lines.Append(item.Id).Append('\n');
    var bytes = System.Text.Encoding.UTF8.GetBytes(lines.ToString());
    received.Write(bytes);
    received.Flush();
});
return 0;

internal sealed class Order
{
    public double Freight { get; set; }
}
