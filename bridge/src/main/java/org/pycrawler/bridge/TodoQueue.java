package org.pycrawler.bridge;

import com.sleepycat.je.Cursor;
import com.sleepycat.je.Database;
import com.sleepycat.je.DatabaseEntry;
import com.sleepycat.je.DatabaseException;
import com.sleepycat.je.LockMode;
import com.sleepycat.je.OperationStatus;
import com.sleepycat.je.Transaction;

/**
 * The pop of a TODO frontier in one JNI crossing: read and delete the first records of a
 * database in one cursor walk (pycrawler.frontier.todo).
 *
 * <p>The caller's transaction covers the walk, so the caller can still undo the whole pop
 * (abort) after looking at what came back. Starting from {@code from}, the smallest key any
 * record can still have, skips the slots of records deleted by earlier pops, which JE keeps
 * until its compressor runs and which a walk from the first key would step over every time.
 */
public final class TodoQueue {
    private TodoQueue() {}

    /**
     * Removes up to {@code limit} records with keys {@code >= from} (null: from the first) in
     * key order; returns their keys and values.
     */
    public static Packed[] takeFirst(Database db, Transaction txn, byte[] from, int limit) throws DatabaseException {
        Packed.Builder keys = new Packed.Builder();
        Packed.Builder values = new Packed.Builder();
        Cursor cursor = db.openCursor(txn, null);
        try {
            DatabaseEntry k = new DatabaseEntry();
            DatabaseEntry v = new DatabaseEntry();
            OperationStatus st;
            if (from == null) {
                st = cursor.getFirst(k, v, LockMode.RMW);
            } else {
                k.setData(from);
                st = cursor.getSearchKeyRange(k, v, LockMode.RMW);
            }
            while (st == OperationStatus.SUCCESS) {
                keys.add(k.getData(), k.getOffset(), k.getSize());
                values.add(v.getData(), v.getOffset(), v.getSize());
                cursor.delete();
                if (keys.count() >= limit) {
                    break;
                }
                st = cursor.getNext(k, v, LockMode.RMW);
            }
        } finally {
            cursor.close();
        }
        return new Packed[] {keys.build(), values.build()};
    }
}
