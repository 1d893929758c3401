namespace Jackdaw.Server.Documents;

/// <summary>Told of each merged transaction once it is durable (<see cref="TransactionMerger{TTransaction}.Observer"/>).</summary>
public interface ITransactionMergerObserver
{
    /// <summary>
    /// A transaction of <paramref name="commands"/> commands is durable, <paramref name="commit"/>
    /// after it was handed to the journal (the write and its fsync, and any earlier transaction it
    /// waited for). Called on the writer's thread or the journal's completion: quick, never blocking.
    /// </summary>
    void Committed(int commands, TimeSpan commit);
}
